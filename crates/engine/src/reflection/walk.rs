//! The conversation of server reflection without I/O: what to ask next ([`Walk::question`]),
//! what a reply gives ([`Walk::take`]), and the schema the files make ([`Walk::finish`]).
//! The messages are `grpc.reflection.v1`'s (`v1alpha`'s are the same on the wire), those
//! fields of them that shootout reads, decoded by prost; the files are kept as the server
//! sent them (encoded `FileDescriptorProto`s), only their name and imports read.
//!
//! A parser of a server's bytes: each reply is at most the bytes left in the budget (the
//! caller's limit on one message), the files kept are at most [`Limits::files`] and
//! [`Limits::bytes`] in all, and each question asks for a file not yet had, so a chain of
//! imports that never ends stops at the limit.

use super::{Found, Limits, ReflectError, Version};
use prost::Message;
use std::collections::{HashSet, VecDeque};

/// `ServerReflectionRequest`: its host and one question.
#[derive(Clone, PartialEq, Message)]
pub struct Request {
    /// `host` (unused by servers; empty).
    #[prost(string, tag = "1")]
    pub host: String,
    /// The question.
    #[prost(oneof = "Asked", tags = "3, 4, 7")]
    pub asked: Option<Asked>,
}

/// The questions shootout asks.
#[derive(Clone, PartialEq, Eq, Hash, prost::Oneof)]
pub enum Asked {
    /// `file_by_filename`: the file of this name.
    #[prost(string, tag = "3")]
    File(String),
    /// `file_containing_symbol`: the file that defines this symbol (a service's full name).
    #[prost(string, tag = "4")]
    Symbol(String),
    /// `list_services`: the services the server serves.
    #[prost(string, tag = "7")]
    Services(String),
}

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asked::File(n) => write!(f, "the file {n:?}"),
            Asked::Symbol(s) => write!(f, "the file defining {s:?}"),
            Asked::Services(_) => write!(f, "the list of services"),
        }
    }
}

/// `ServerReflectionResponse`: the question it answers, and its answer.
#[derive(Clone, PartialEq, Message)]
struct Response {
    /// `original_request`.
    #[prost(message, optional, tag = "2")]
    original: Option<Request>,
    /// The answer.
    #[prost(oneof = "Answer", tags = "4, 6, 7")]
    answer: Option<Answer>,
}

/// The answers shootout reads.
#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    /// `file_descriptor_response`.
    #[prost(message, tag = "4")]
    Files(Files),
    /// `list_services_response`.
    #[prost(message, tag = "6")]
    Services(Services),
    /// `error_response`.
    #[prost(message, tag = "7")]
    Error(ErrorReply),
}

/// `FileDescriptorResponse`: encoded `FileDescriptorProto`s.
#[derive(Clone, PartialEq, Message)]
struct Files {
    #[prost(bytes = "vec", repeated, tag = "1")]
    files: Vec<Vec<u8>>,
}

/// `ListServiceResponse`.
#[derive(Clone, PartialEq, Message)]
struct Services {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceName>,
}

/// `ServiceResponse`.
#[derive(Clone, PartialEq, Message)]
struct ServiceName {
    #[prost(string, tag = "1")]
    name: String,
}

/// `ErrorResponse`.
#[derive(Clone, PartialEq, Message)]
struct ErrorReply {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// What a `FileDescriptorProto` says of itself that the walk needs: its name and the
/// files it imports.
#[derive(Clone, PartialEq, Message)]
struct FileHead {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, repeated, tag = "3")]
    dependency: Vec<String>,
}

/// What the schema is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// The file defining this service (`package.Service`) and its imports.
    Service(String),
    /// Every service the server lists (reflection's own left out), their files and
    /// their imports.
    All,
}

/// The services reflection itself serves, which are no workload's.
pub const REFLECTION_PACKAGE: &str = "grpc.reflection.";

/// The most services a list may name.
const MAX_SERVICES: usize = 1000;

/// One conversation's state.
#[derive(Debug)]
pub struct Walk {
    ask: Ask,
    limits: Limits,
    queue: VecDeque<Asked>,
    /// The files had, by name, and their bytes.
    names: HashSet<String>,
    files: Vec<Vec<u8>>,
    /// The file names asked for.
    asked: HashSet<String>,
    /// The bytes of the files had.
    bytes: usize,
    /// The services listed.
    services: Vec<String>,
}

impl Walk {
    /// A conversation that gets what `ask` asks for, within `limits`.
    pub fn new(ask: Ask, limits: Limits) -> Walk {
        let first = match &ask {
            Ask::Service(s) => Asked::Symbol(s.clone()),
            Ask::All => Asked::Services(String::new()),
        };
        Walk {
            ask,
            limits,
            queue: VecDeque::from([first]),
            names: HashSet::new(),
            files: Vec::new(),
            asked: HashSet::new(),
            bytes: 0,
            services: Vec::new(),
        }
    }

    /// The next question, encoded as a `ServerReflectionRequest`; `None` when all is had.
    pub fn question(&mut self) -> Option<(Asked, Vec<u8>)> {
        loop {
            let asked = self.queue.pop_front()?;
            // A file may have come with another before its turn.
            if matches!(&asked, Asked::File(n) if self.names.contains(n)) {
                continue;
            }
            let request = Request {
                host: String::new(),
                asked: Some(asked.clone()),
            };
            return Some((asked, request.encode_to_vec()));
        }
    }

    /// The most bytes the next reply may have: what is left of the budget, and room for
    /// the reply's own fields.
    pub fn room(&self) -> usize {
        self.limits.bytes.saturating_sub(self.bytes) + 64 * 1024
    }

    /// The files kept so far, and their bytes.
    pub fn kept(&self) -> (usize, usize) {
        (self.files.len(), self.bytes)
    }

    /// The server's reply (one `ServerReflectionResponse`'s bytes) to `asked`.
    pub fn take(&mut self, asked: &Asked, reply: &[u8]) -> Result<(), ReflectError> {
        let r = Response::decode(reply)
            .map_err(|e| ReflectError::Garbled(format!("not a ServerReflectionResponse: {e}")))?;
        if let Some(original) = r.original.and_then(|o| o.asked) {
            if original != *asked {
                return Err(ReflectError::OtherReply {
                    asked: asked.to_string(),
                    got: original.to_string(),
                });
            }
        }
        match (asked, r.answer) {
            (_, Some(Answer::Error(e))) => Err(ReflectError::NotFound {
                asked: asked.to_string(),
                code: e.code,
                message: e.message.chars().take(200).collect(),
            }),
            (Asked::Services(_), Some(Answer::Services(list))) => {
                self.listed(list);
                Ok(())
            }
            (Asked::File(_) | Asked::Symbol(_), Some(Answer::Files(f))) => {
                for file in f.files {
                    self.file(file)?;
                }
                match asked {
                    Asked::File(n) if !self.names.contains(n) => Err(ReflectError::OtherReply {
                        asked: asked.to_string(),
                        got: "other files".into(),
                    }),
                    _ => Ok(()),
                }
            }
            (_, None) => Err(ReflectError::Garbled("a reply with no answer".into())),
            (_, Some(_)) => Err(ReflectError::OtherReply {
                asked: asked.to_string(),
                got: "an answer of another kind".into(),
            }),
        }
    }

    /// The services listed: each but reflection's own is asked for its file.
    fn listed(&mut self, list: Services) {
        for s in list.service.into_iter().take(MAX_SERVICES) {
            if s.name.starts_with(REFLECTION_PACKAGE) || self.services.contains(&s.name) {
                continue;
            }
            self.queue.push_back(Asked::Symbol(s.name.clone()));
            self.services.push(s.name);
        }
    }

    /// One file the server sent: kept (within the limits) and its imports asked for.
    fn file(&mut self, bytes: Vec<u8>) -> Result<(), ReflectError> {
        let head = FileHead::decode(&bytes[..]).map_err(|e| {
            ReflectError::Garbled(format!("a file descriptor that does not parse: {e}"))
        })?;
        let Some(name) = head.name.filter(|n| !n.is_empty()) else {
            return Err(ReflectError::Garbled(
                "a file descriptor with no name".into(),
            ));
        };
        if self.names.contains(&name) {
            return Ok(());
        }
        if self.files.len() >= self.limits.files {
            return Err(ReflectError::TooManyFiles(self.limits.files));
        }
        if self.bytes + bytes.len() > self.limits.bytes {
            return Err(ReflectError::TooLarge(self.limits.bytes));
        }
        self.bytes += bytes.len();
        self.files.push(bytes);
        self.names.insert(name);
        for dep in head.dependency {
            if !self.names.contains(&dep) && self.asked.insert(dep.clone()) {
                self.queue.push_back(Asked::File(dep));
            }
        }
        Ok(())
    }

    /// The schema the files make (an encoded `FileDescriptorSet`), checked: its files
    /// must make a pool, and hold the service asked for (or, asked for all, the services
    /// listed that they hold).
    pub fn finish(self, version: Version) -> Result<Found, ReflectError> {
        let mut set = Vec::with_capacity(self.bytes + 6 * self.files.len());
        for f in &self.files {
            prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut set);
            prost::encoding::encode_varint(f.len() as u64, &mut set);
            set.extend_from_slice(f);
        }
        let pool = crate::h2::grpc::decode_pool(&set).map_err(ReflectError::Descriptors)?;
        let services = match self.ask {
            Ask::Service(s) => {
                if pool.get_service_by_name(&s).is_none() {
                    return Err(ReflectError::Missing(s));
                }
                vec![s]
            }
            Ask::All => self
                .services
                .into_iter()
                .filter(|s| pool.get_service_by_name(s).is_some())
                .collect(),
        };
        Ok(Found {
            set,
            services,
            version,
        })
    }
}

/// A `ServerReflectionResponse` holding `files` as the answer to `asked` (the test
/// servers' and the fuzz targets' replies).
pub fn files_reply(asked: Option<Asked>, files: Vec<Vec<u8>>) -> Vec<u8> {
    Response {
        original: asked.map(|a| Request {
            host: String::new(),
            asked: Some(a),
        }),
        answer: Some(Answer::Files(Files { files })),
    }
    .encode_to_vec()
}

/// A `ServerReflectionResponse` listing `services`.
pub fn services_reply(services: &[&str]) -> Vec<u8> {
    Response {
        original: None,
        answer: Some(Answer::Services(Services {
            service: services
                .iter()
                .map(|s| ServiceName {
                    name: s.to_string(),
                })
                .collect(),
        })),
    }
    .encode_to_vec()
}

/// A `ServerReflectionResponse` with an `ErrorResponse`.
pub fn error_reply(code: i32, message: &str) -> Vec<u8> {
    Response {
        original: None,
        answer: Some(Answer::Error(ErrorReply {
            code,
            message: message.to_string(),
        })),
    }
    .encode_to_vec()
}

/// The question a `ServerReflectionRequest`'s bytes ask (the test servers'), if any.
pub fn asked_of(bytes: &[u8]) -> Option<Asked> {
    Request::decode(bytes).ok()?.asked
}

#[cfg(test)]
mod tests;
