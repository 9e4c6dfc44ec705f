//! Rate mode's closed connections waiting for a request that needs them ([`Spare`]):
//! one list for every protocol's worker.

/// Closed connections with nothing queued, opened again only when a request finds no free
/// connection, most recently closed first. Each connection is listed at most once, so the
/// list never holds more entries than the worker has connections, however often the
/// server closes them; an entry whose connection was opened again since is dropped when
/// it comes to the top.
#[derive(Debug, Default)]
pub(crate) struct Spare {
    list: Vec<usize>,
    /// `listed[i]`: connection `i` has an entry in `list`.
    listed: Vec<bool>,
}

impl Spare {
    /// Lists connection `i` (closed, nothing queued), unless it is listed already.
    pub fn push(&mut self, i: usize) {
        if i >= self.listed.len() {
            self.listed.resize(i + 1, false);
        }
        if !self.listed[i] {
            self.listed[i] = true;
            self.list.push(i);
        }
    }

    /// Drops the entries at the top that `usable` refuses (opened again since); whether one
    /// is left for [`Spare::pop`].
    pub fn ready(&mut self, usable: impl Fn(usize) -> bool) -> bool {
        while let Some(&i) = self.list.last() {
            if usable(i) {
                return true;
            }
            self.pop();
        }
        false
    }

    /// The most recently closed connection listed.
    pub fn pop(&mut self) -> Option<usize> {
        let i = self.list.pop()?;
        self.listed[i] = false;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::Spare;

    #[test]
    fn a_connection_closed_again_and_again_is_listed_once() {
        let mut s = Spare::default();
        for _ in 0..1000 {
            s.push(3);
            s.push(1);
        }
        assert_eq!(s.list.len(), 2);
        assert_eq!((s.pop(), s.pop(), s.pop()), (Some(1), Some(3), None));
        s.push(3);
        assert_eq!(s.pop(), Some(3), "listed again once popped");
    }

    #[test]
    fn entries_opened_since_are_dropped_from_the_top() {
        let mut s = Spare::default();
        for i in [0, 1, 2] {
            s.push(i);
        }
        assert!(s.ready(|i| i == 0));
        assert_eq!(s.pop(), Some(0));
        assert!(!s.ready(|_| false));
        s.push(2);
        assert_eq!(s.list, vec![2], "2 was unlisted when dropped");
    }
}
