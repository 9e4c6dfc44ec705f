//! The codecs HTTP's protocols share, written once below the protocol folders (which
//! import nothing from each other): the integers and string literals of HPACK (RFC 7541
//! §5.1, §5.2) that QPACK uses as they are (RFC 9204 §4.1.1, §4.1.2) ([`prefix`]), their
//! Huffman code ([`huffman`]), and the decimals of a Content-Length and of a rendered
//! request ([`decimal`]).
//!
//! Each decoder reads bytes a server sent: a malformed input is a [`CodecError`], never a
//! panic, and no integer it accepts is over 2^28 (four continuation bytes), so nothing it
//! decodes can ask for more memory than the bytes that came.

pub mod decimal;
pub mod huffman;
pub mod prefix;

/// Why a field-compression codec could not read its input. HPACK and QPACK turn each into
/// their own error (COMPRESSION_ERROR, QPACK_DECOMPRESSION_FAILED).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The input ends inside an integer or a string.
    #[error("the input ends inside an integer or a string")]
    Truncated,
    /// An integer over 2^28.
    #[error("an integer is over 2^28")]
    Integer,
    /// A Huffman string holds the EOS symbol, or ends in padding that is not the start of
    /// EOS or is longer than 7 bits (RFC 7541 §5.2).
    #[error("a Huffman-coded string is malformed")]
    Huffman,
}
