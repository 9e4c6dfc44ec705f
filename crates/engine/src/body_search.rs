//! The streaming search of a response body for `--expect-body-contains`, shared by the
//! HTTP/1.1 parser and the HTTP/2 streams: each piece of body is searched as it arrives,
//! and only the needle's length of body is kept across pieces, however long the body.

use memchr::memmem::Finder;

/// Searches one body at a time for a needle; without a needle it never matches.
#[derive(Debug, Clone)]
pub struct BodySearch {
    needle: Option<Finder<'static>>,
    /// The last `needle.len() - 1` body bytes, so a match across two pieces is found.
    tail: Vec<u8>,
    /// The needle was found in this body.
    pub matched: bool,
}

impl BodySearch {
    /// A search for `needle` (none: the body is only counted elsewhere).
    pub fn new(needle: Option<&[u8]>) -> Self {
        let needle = needle.map(|n| Finder::new(n).into_owned());
        BodySearch {
            tail: Vec::with_capacity(needle.as_ref().map_or(0, |n| n.needle().len() * 2)),
            needle,
            matched: false,
        }
    }

    /// Searches for `needle` from the next body on: the search already built is kept
    /// when the needle is the same (a journey's step asks for its needle per request;
    /// only a new one allocates).
    pub fn set(&mut self, needle: Option<&[u8]>) {
        if self.needle.as_ref().map(|f| f.needle()) != needle {
            *self = BodySearch::new(needle);
        }
        self.reset();
    }

    /// Gets ready for the next body; the buffer keeps its capacity.
    pub fn reset(&mut self) {
        self.tail.clear();
        self.matched = false;
    }

    /// Bytes kept across pieces (for tests of constant memory).
    #[cfg(test)]
    pub fn kept_capacity(&self) -> usize {
        self.tail.capacity()
    }

    /// Searches the next piece of the body.
    pub fn feed(&mut self, b: &[u8]) {
        if self.matched || b.is_empty() {
            return;
        }
        let Some(finder) = &self.needle else { return };
        let keep = finder.needle().len().saturating_sub(1);
        // A match that starts in the kept tail and ends in `b`: search the tail joined with
        // the first `keep` bytes of `b` (at most 2 × needle bytes, in a reused buffer).
        if !self.tail.is_empty() {
            let before = self.tail.len();
            self.tail.extend_from_slice(&b[..b.len().min(keep)]);
            self.matched = finder.find(&self.tail).is_some();
            self.tail.truncate(before);
        }
        self.matched = self.matched || finder.find(b).is_some();
        // Keep the last `keep` bytes of tail + b for the next piece.
        if b.len() >= keep {
            self.tail.clear();
            self.tail.extend_from_slice(&b[b.len() - keep..]);
        } else {
            self.tail.extend_from_slice(b);
            let extra = self.tail.len().saturating_sub(keep);
            self.tail.drain(..extra);
        }
    }
}
