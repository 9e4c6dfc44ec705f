//! One user's cookie jar for one host, as RFC 6265 says a user agent keeps it: `Set-Cookie`
//! parsed as §5.2 says (attributes it does not know ignored), stored as §5.3 says (a
//! cookie replaces the one of the same name and path, keeping its creation time; an
//! expiry in the past deletes it; `Max-Age` wins over `Expires`; a `Domain` the host does
//! not domain-match is refused), and sent as §5.4 says (path-matched, unexpired, `Secure`
//! ones over TLS only, longer paths first, then older first).
//!
//! Bounded: a cookie over [`MAX_COOKIE`] bytes is ignored, and at most [`MAX_COOKIES`] are
//! kept (the oldest evicted), the least §6.1 asks a user agent to keep.

/// The most bytes of one `Set-Cookie` value kept (RFC 6265 §6.1: at least 4096).
pub const MAX_COOKIE: usize = 4096;
/// The most cookies one jar keeps (RFC 6265 §6.1: at least 50 per domain).
pub const MAX_COOKIES: usize = 50;

#[derive(Debug, Clone)]
struct Cookie {
    name: Vec<u8>,
    value: Vec<u8>,
    path: Vec<u8>,
    /// Unix seconds; `None`: a session cookie.
    expires: Option<i64>,
    secure: bool,
    created: u64,
}

/// The attributes of one `Set-Cookie` field that the jar keeps.
struct Attributes<'f> {
    /// When it expires (Unix seconds; Max-Age over Expires), if it does.
    expires: Option<i64>,
    /// Its Path, when it gave one that starts with `/`.
    path: Option<&'f [u8]>,
    /// Whether it goes only over TLS.
    secure: bool,
}

/// The cookies of one user for one host.
#[derive(Debug, Clone, Default)]
pub struct Jar {
    host: String,
    cookies: Vec<Cookie>,
    created: u64,
}

impl Jar {
    /// An empty jar for `host` (a name or an address, without port).
    pub fn new(host: &str) -> Jar {
        Jar {
            host: host.trim_end_matches('.').to_ascii_lowercase(),
            cookies: Vec::new(),
            created: 0,
        }
    }

    /// Cookies held (expired ones included until the next look).
    pub fn len(&self) -> usize {
        self.cookies.len()
    }

    /// True when the jar holds none.
    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    /// Empties the jar.
    pub fn clear(&mut self) {
        self.cookies.clear();
    }

    /// The value of the unexpired cookie `name` (the longest path's).
    pub fn get(&self, name: &[u8], now: i64) -> Option<&[u8]> {
        self.cookies
            .iter()
            .filter(|c| c.name == name && c.expires.is_none_or(|e| e > now))
            .max_by_key(|c| c.path.len())
            .map(|c| c.value.as_slice())
    }

    /// Takes one `Set-Cookie` field's value, received for a request to `target` (path and
    /// query) at `now` (Unix seconds). RFC 6265 §5.2 and §5.3.
    pub fn set(&mut self, field: &[u8], target: &[u8], now: i64) {
        if field.len() > MAX_COOKIE {
            return;
        }
        let mut parts = field.split(|&b| b == b';');
        let pair = parts.next().unwrap_or(b"");
        let Some(eq) = pair.iter().position(|&b| b == b'=') else {
            return;
        };
        let name = trim(&pair[..eq]);
        let value = trim(&pair[eq + 1..]);
        if name.is_empty() {
            return;
        }
        // RFC 6265bis §5.7: a name or value holding a control byte other than HTAB is
        // ignored whole; kept, it would go back to the server inside the Cookie header.
        if name
            .iter()
            .chain(value)
            .any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f)
        {
            return;
        }
        let Some(attrs) = self.attributes(parts, now) else {
            return; // §5.3 step 6: not for this host.
        };
        let path = match attrs.path {
            Some(p) => p.to_vec(),
            None => default_path(target).to_vec(),
        };
        self.store(name, value, path, attrs, now);
    }

    /// A `Set-Cookie` field's attributes (those after its name and value), read at `now`;
    /// `None` when its Domain is not this host's. RFC 6265 §5.2.
    fn attributes<'f>(
        &self,
        parts: impl Iterator<Item = &'f [u8]>,
        now: i64,
    ) -> Option<Attributes<'f>> {
        let mut expires: Option<i64> = None;
        let mut max_age: Option<i64> = None;
        let mut attrs = Attributes {
            expires: None,
            path: None,
            secure: false,
        };
        for attr in parts {
            let (key, val) = match attr.iter().position(|&b| b == b'=') {
                Some(i) => (trim(&attr[..i]), trim(&attr[i + 1..])),
                None => (trim(attr), &b""[..]),
            };
            if key.eq_ignore_ascii_case(b"expires") {
                if let Some(t) = cookie_date(val) {
                    expires = Some(t);
                }
            } else if key.eq_ignore_ascii_case(b"max-age") {
                if let Some(delta) = max_age_of(val) {
                    // §5.2.2: 0 or less is the earliest time; else now + delta.
                    max_age = Some(if delta <= 0 {
                        i64::MIN
                    } else {
                        now.saturating_add(delta)
                    });
                }
            } else if key.eq_ignore_ascii_case(b"domain") {
                let d = val.strip_prefix(b".").unwrap_or(val);
                if !d.is_empty() && !self.domain_matches(d) {
                    return None;
                }
            } else if key.eq_ignore_ascii_case(b"path") {
                attrs.path = (val.first() == Some(&b'/')).then_some(val);
            } else if key.eq_ignore_ascii_case(b"secure") {
                attrs.secure = true;
            }
        }
        attrs.expires = max_age.or(expires);
        Some(attrs)
    }

    /// Stores a cookie (replacing the one of the same name and path, keeping its creation
    /// order), or deletes it when it expired on arrival; the jar holds at most
    /// [`MAX_COOKIES`], the oldest going first. RFC 6265 §5.3 steps 11–12.
    fn store(&mut self, name: &[u8], value: &[u8], path: Vec<u8>, attrs: Attributes, now: i64) {
        let old = self
            .cookies
            .iter()
            .position(|c| c.name == name && c.path == path);
        let created = match old {
            Some(i) => self.cookies.remove(i).created,
            None => {
                self.created += 1;
                self.created
            }
        };
        if attrs.expires.is_some_and(|e| e <= now) {
            return; // Deleted, or expired on arrival.
        }
        self.cookies.retain(|c| c.expires.is_none_or(|e| e > now));
        if self.cookies.len() >= MAX_COOKIES {
            if let Some(oldest) = (0..self.cookies.len()).min_by_key(|&i| self.cookies[i].created) {
                self.cookies.remove(oldest);
            }
        }
        self.cookies.push(Cookie {
            name: name.to_vec(),
            value: value.to_vec(),
            path,
            expires: attrs.expires,
            secure: attrs.secure,
            created,
        });
    }

    /// Writes the `Cookie` field's value for a request to `target` at `now` into `out`
    /// (appended; nothing when no cookie applies), over TLS or not. RFC 6265 §5.4.
    /// Returns whether anything was written.
    pub fn header(&mut self, target: &[u8], tls: bool, now: i64, out: &mut Vec<u8>) -> bool {
        self.cookies.retain(|c| c.expires.is_none_or(|e| e > now));
        let path = uri_path(target);
        // Longer paths first, then older first (§5.4 step 2); at most 50, so a sort of
        // indices on the stack.
        let mut order = [0u8; MAX_COOKIES];
        let mut n = 0;
        for (i, c) in self.cookies.iter().enumerate() {
            if path_matches(&c.path, path) && (tls || !c.secure) {
                order[n] = i as u8;
                n += 1;
            }
        }
        let order = &mut order[..n];
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.cookies[a as usize], &self.cookies[b as usize]);
            b.path
                .len()
                .cmp(&a.path.len())
                .then(a.created.cmp(&b.created))
        });
        for (k, &i) in order.iter().enumerate() {
            if k > 0 {
                out.extend_from_slice(b"; ");
            }
            let c = &self.cookies[i as usize];
            out.extend_from_slice(&c.name);
            out.push(b'=');
            out.extend_from_slice(&c.value);
        }
        n > 0
    }

    /// §5.1.3: the host equals the domain, or ends with `.domain` and is a name (not an
    /// IP address).
    fn domain_matches(&self, domain: &[u8]) -> bool {
        let host = self.host.as_bytes();
        if host.eq_ignore_ascii_case(domain) {
            return true;
        }
        let is_ip = self.host.parse::<std::net::IpAddr>().is_ok() || self.host.starts_with('[');
        !is_ip
            && host.len() > domain.len()
            && host[..host.len() - domain.len()].ends_with(b".")
            && host[host.len() - domain.len()..].eq_ignore_ascii_case(domain)
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b" \t".contains(b))
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b" \t".contains(b))
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// The path of a request target (without query or fragment).
fn uri_path(target: &[u8]) -> &[u8] {
    let end = target
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .unwrap_or(target.len());
    &target[..end]
}

/// §5.1.4: the default path of a cookie set for a request to `target`.
fn default_path(target: &[u8]) -> &[u8] {
    let path = uri_path(target);
    if path.first() != Some(&b'/') {
        return b"/";
    }
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) | None => b"/",
        Some(i) => &path[..i],
    }
}

/// §5.1.4: whether a request's path path-matches a cookie's path.
fn path_matches(cookie: &[u8], path: &[u8]) -> bool {
    let path = if path.is_empty() { b"/" } else { path };
    path == cookie
        || (path.starts_with(cookie)
            && (cookie.last() == Some(&b'/') || path.get(cookie.len()) == Some(&b'/')))
}

/// §5.2.2: `Max-Age`'s value: an optional `-` and digits (too many digits: the most).
fn max_age_of(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, v),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().try_fold(0i64, |n, &d| {
        n.checked_mul(10)?.checked_add((d - b'0') as i64)
    });
    let n = n.unwrap_or(i64::MAX);
    Some(if neg { -n } else { n })
}

/// §5.1.1: a cookie-date, as Unix seconds.
fn cookie_date(v: &[u8]) -> Option<i64> {
    let delimiter = |b: u8| {
        b == 0x09
            || (0x20..=0x2f).contains(&b)
            || (0x3b..=0x40).contains(&b)
            || (0x5b..=0x60).contains(&b)
            || (0x7b..=0x7e).contains(&b)
    };
    let (mut time, mut day, mut month, mut year) = (None, None, None, None);
    for token in v.split(|&b| delimiter(b)).filter(|t| !t.is_empty()) {
        if time.is_none() {
            if let Some(t) = hms(token) {
                time = Some(t);
                continue;
            }
        }
        if day.is_none() {
            if let Some(d) = digits(token, 1, 2) {
                day = Some(d);
                continue;
            }
        }
        if month.is_none() && token.len() >= 3 {
            const MONTHS: [&[u8]; 12] = [
                b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct",
                b"nov", b"dec",
            ];
            if let Some(m) = MONTHS
                .iter()
                .position(|m| token[..3].eq_ignore_ascii_case(m))
            {
                month = Some(m as i64 + 1);
                continue;
            }
        }
        if year.is_none() {
            if let Some(y) = digits(token, 2, 4) {
                year = Some(y);
                continue;
            }
        }
    }
    let (h, m, s) = time?;
    let (day, month, mut year) = (day?, month?, year?);
    if (70..=99).contains(&year) {
        year += 1900;
    } else if (0..=69).contains(&year) {
        year += 2000;
    }
    if !(1..=31).contains(&day) || year < 1601 || h > 23 || m > 59 || s > 59 {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day > month_days[(month - 1) as usize] {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// A token of `min..=max` digits, followed by anything not a digit (§5.1.1's
/// `*OCTET` after the digits).
fn digits(token: &[u8], min: usize, max: usize) -> Option<i64> {
    let n = token.iter().take_while(|b| b.is_ascii_digit()).count();
    if n < min || n > max {
        return None;
    }
    Some(
        token[..n]
            .iter()
            .fold(0, |v, &d| v * 10 + (d - b'0') as i64),
    )
}

/// `h:m:s` with one or two digits each (§5.1.1's hms-time), anything after the seconds'
/// digits allowed.
fn hms(token: &[u8]) -> Option<(i64, i64, i64)> {
    let mut parts = token.splitn(3, |&b| b == b':');
    let h = parts.next()?;
    let m = parts.next()?;
    let s = parts.next()?;
    let whole = |p: &[u8]| {
        (!p.is_empty() && p.len() <= 2 && p.iter().all(u8::is_ascii_digit))
            .then(|| p.iter().fold(0, |v, &d| v * 10 + (d - b'0') as i64))
    };
    Some((whole(h)?, whole(m)?, digits(s, 1, 2)?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2020-01-01T00:00:00Z.
    const NOW: i64 = 1_577_836_800;

    fn sent(jar: &mut Jar, target: &str, tls: bool) -> String {
        let mut out = Vec::new();
        jar.header(target.as_bytes(), tls, NOW, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// RFC 6265 §3.1's examples, in order, for the host www.example.com.
    #[test]
    fn rfc_6265_section_3_1_examples() {
        let mut jar = Jar::new("www.example.com");
        jar.set(b"SID=31d4d96e407aad42", b"/", NOW);
        assert_eq!(sent(&mut jar, "/", false), "SID=31d4d96e407aad42");

        let mut jar = Jar::new("www.example.com");
        jar.set(
            b"SID=31d4d96e407aad42; Path=/; Domain=example.com",
            b"/",
            NOW,
        );
        jar.set(b"lang=en-US; Path=/; Domain=example.com", b"/", NOW);
        assert_eq!(
            sent(&mut jar, "/", false),
            "SID=31d4d96e407aad42; lang=en-US"
        );

        let mut jar = Jar::new("www.example.com");
        jar.set(b"SID=31d4d96e407aad42; Path=/; Secure; HttpOnly", b"/", NOW);
        jar.set(b"lang=en-US; Path=/; Domain=example.com", b"/", NOW);
        assert_eq!(
            sent(&mut jar, "/", true),
            "SID=31d4d96e407aad42; lang=en-US"
        );
        // The Secure cookie is not sent over plain HTTP.
        assert_eq!(sent(&mut jar, "/", false), "lang=en-US");

        // Expires in 2021: kept; then the server deletes it with a date in the past.
        jar.set(
            b"lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
            b"/",
            NOW,
        );
        assert_eq!(
            sent(&mut jar, "/", true),
            "SID=31d4d96e407aad42; lang=en-US"
        );
        jar.set(b"lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT", b"/", NOW);
        assert_eq!(sent(&mut jar, "/", true), "SID=31d4d96e407aad42");
    }

    #[test]
    fn expires_and_max_age() {
        let mut jar = Jar::new("example.com");
        // Expires in 2021, read at NOW and a year later.
        jar.set(b"a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT", b"/", NOW);
        assert_eq!(jar.get(b"a", NOW), Some(&b"1"[..]));
        assert_eq!(jar.get(b"a", NOW + 2 * 366 * 86_400), None);
        // Max-Age wins over Expires, whatever their order.
        jar.set(
            b"b=2; Max-Age=10; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
            b"/",
            NOW,
        );
        assert_eq!(jar.get(b"b", NOW + 9), Some(&b"2"[..]));
        assert_eq!(jar.get(b"b", NOW + 10), None);
        // Max-Age=0 and negative delete.
        jar.set(b"c=3", b"/", NOW);
        jar.set(b"c=3; Max-Age=0", b"/", NOW);
        assert_eq!(jar.get(b"c", NOW), None);
        jar.set(b"d=4", b"/", NOW);
        jar.set(b"d=4; Max-Age=-1", b"/", NOW);
        assert_eq!(jar.get(b"d", NOW), None);
        // A Max-Age that is not a number is ignored (a session cookie).
        jar.set(b"e=5; Max-Age=soon", b"/", NOW);
        assert_eq!(jar.get(b"e", i64::MAX - 1), Some(&b"5"[..]));
    }

    #[test]
    fn cookie_dates_per_section_5_1_1() {
        let t = |s: &str| cookie_date(s.as_bytes());
        assert_eq!(t("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(t("Sunday, 06-Nov-94 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(t("Sun Nov  6 08:49:37 1994"), Some(784_111_777));
        assert_eq!(t("Wed, 09 Jun 2021 10:18:14 GMT"), Some(1_623_233_894));
        assert_eq!(t("09 jun 21 10:18:14"), Some(1_623_233_894));
        assert_eq!(t("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(t("Sat, 31 Feb 2021 10:18:14 GMT"), None);
        assert_eq!(t("Wed, 09 Jun 2021 24:18:14 GMT"), None);
        assert_eq!(t("Wed, 09 Jun 1600 10:18:14 GMT"), None);
        assert_eq!(t("Wed, 09 Jun 2021"), None);
        assert_eq!(t(""), None);
    }

    #[test]
    fn paths_match_per_section_5_1_4() {
        assert_eq!(default_path(b"/a/b/c?x=/y"), b"/a/b");
        assert_eq!(default_path(b"/a"), b"/");
        assert_eq!(default_path(b"x"), b"/");
        assert!(path_matches(b"/a", b"/a"));
        assert!(path_matches(b"/a", b"/a/b"));
        assert!(path_matches(b"/a/", b"/a/b"));
        assert!(!path_matches(b"/a", b"/ab"));
        assert!(!path_matches(b"/a/b", b"/a"));
        let mut jar = Jar::new("example.com");
        jar.set(b"x=1; Path=/docs", b"/", NOW);
        jar.set(b"y=2", b"/docs/web/page", NOW); // default path /docs/web
        jar.set(b"z=3; Path=/", b"/", NOW);
        assert_eq!(sent(&mut jar, "/docs/web/a?q", false), "y=2; x=1; z=3");
        assert_eq!(sent(&mut jar, "/docsets", false), "z=3");
        // Same name and path: replaced, keeping its place (creation time).
        jar.set(b"x=9; Path=/docs", b"/", NOW);
        assert_eq!(sent(&mut jar, "/docs/web/a", false), "y=2; x=9; z=3");
        assert_eq!(jar.len(), 3);
    }

    #[test]
    fn domains_and_bad_fields() {
        let mut jar = Jar::new("www.example.com");
        jar.set(b"a=1; Domain=other.com", b"/", NOW);
        jar.set(b"b=1; Domain=ample.com", b"/", NOW);
        jar.set(b"noequals", b"/", NOW);
        jar.set(b"=novalue", b"/", NOW);
        jar.set(b" c = 3 ; Domain=.EXAMPLE.com", b"/", NOW);
        jar.set(b"\0d=4", b"/", NOW);
        jar.set(b"e=5\r", b"/", NOW);
        jar.set(b"f=\x7f", b"/", NOW);
        assert_eq!(sent(&mut jar, "/", false), "c=3");
        let mut ip = Jar::new("127.0.0.1");
        ip.set(b"a=1; Domain=0.0.1", b"/", NOW);
        ip.set(b"b=2; Domain=127.0.0.1", b"/", NOW);
        assert_eq!(sent(&mut ip, "/", false), "b=2");
    }

    #[test]
    fn bounded_in_count_and_size() {
        let mut jar = Jar::new("h");
        for i in 0..200 {
            jar.set(format!("c{i}=v").as_bytes(), b"/", NOW);
        }
        assert_eq!(jar.len(), MAX_COOKIES);
        assert_eq!(jar.get(b"c0", NOW), None);
        assert_eq!(jar.get(b"c199", NOW), Some(&b"v"[..]));
        let big = format!("big={}", "x".repeat(MAX_COOKIE));
        jar.set(big.as_bytes(), b"/", NOW);
        assert_eq!(jar.get(b"big", NOW), None);
    }
}
