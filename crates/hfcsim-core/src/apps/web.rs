//! Web page loads (`[[web]]`): a main document, then the objects found in it, then the objects
//! found in those, on several hosts, over HTTP/1.1 or HTTP/2, each connection with its TCP
//! handshake and TLS as round trips.
//!
//! - HTTP/1.1 (RFC 9112 Sec. 9.3, persistent connections without pipelining): one request at a
//!   time per connection; a browser opens up to `connections_per_host` per host (Chrome and
//!   Firefox: 6); an object waits for an idle connection, and a new one opens while fewer are
//!   open or opening than the limit and objects wait.
//! - HTTP/2 (RFC 9113): one connection per host; every object found is requested at once on it.
//!   The client's connection preface and SETTINGS go with its first request (24 + 9 + 18 bytes),
//!   the server's SETTINGS and SETTINGS ACK with its first response (27 + 9). Each response is a
//!   HEADERS frame and DATA frames of at most 16,384 bytes (SETTINGS_MAX_FRAME_SIZE's initial
//!   value), 9 bytes of frame header each. Chosen: the server writes a response as soon as its
//!   request has arrived, and the responses whose requests arrived together go round-robin frame
//!   by frame (streams of equal weight); a later request's response goes after them.
//! - A page's load time is from its start (navigation) to its last object's last byte; its time
//!   to first byte, to the first byte of the document's response. No DNS, no rendering and no
//!   script time (chosen: the network's part of a page load).

use super::{Cmd, ConnState as State, Tls, Waits};
use crate::time::{Nanos, SimTime};

/// A page: the document, the objects found in it, the objects found in those.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub document: u64,
    /// Level 1: found in the document.
    pub objects: Vec<u64>,
    /// Level 2: sub-object j is found in level-1 object j mod objects.len().
    pub subobjects: Vec<u64>,
    /// Hosts: the document on host 0, object k (1, 2, ... over level 1 then level 2) on k mod hosts.
    pub hosts: u32,
}

/// A named page profile and its source.
pub struct Profile {
    pub name: &'static str,
    pub source: &'static str,
    pub document: u64,
    pub total_bytes: u64,
    pub requests: u32,
}

/// HTTP Archive, Web Almanac 2024, chapter "Page Weight" (October 2024 crawl): the median page
/// weighs 2,652 KB in 71 requests on desktop, 2,311 KB in 66 on mobile; the median desktop page's
/// HTML is 18 KB (chosen for mobile too). Chosen: the other requests' bytes spread evenly over
/// them, two thirds found in the document and one third in those objects, on 6 hosts.
pub const PROFILES: [Profile; 2] = [
    Profile {
        name: "almanac2024-desktop",
        source: "HTTP Archive Web Almanac 2024, Page Weight: median desktop page 2,652 KB, 71 requests",
        document: 18_000,
        total_bytes: 2_652_000,
        requests: 71,
    },
    Profile {
        name: "almanac2024-mobile",
        source: "HTTP Archive Web Almanac 2024, Page Weight: median mobile page 2,311 KB, 66 requests",
        document: 18_000,
        total_bytes: 2_311_000,
        requests: 66,
    },
];

/// The profile's hosts (chosen).
pub const PROFILE_HOSTS: u32 = 6;

impl Page {
    /// The page of a named profile (`PROFILES`).
    pub fn profile(name: &str) -> Option<Page> {
        let p = PROFILES.iter().find(|p| p.name == name)?;
        let others = (p.requests - 1) as u64;
        let size = (p.total_bytes - p.document) / others;
        let level1 = (2 * others).div_ceil(3);
        Page {
            document: p.document,
            objects: vec![size; level1 as usize],
            subobjects: vec![size; (others - level1) as usize],
            hosts: PROFILE_HOSTS,
        }
        .into()
    }
}

/// `[[web]]` as the engine runs it.
#[derive(Clone, Debug)]
pub struct WebSpec {
    pub modem: u32,
    pub page: Page,
    pub http2: bool,
    pub connections_per_host: u32,
    pub tls: Tls,
    pub request_bytes: u64,
    pub response_header_bytes: u64,
    pub pages: u32,
    pub think: Nanos,
    pub start: SimTime,
    pub stop: Option<SimTime>,
}

/// One page load's result.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRecord {
    pub page: u32,
    pub start: SimTime,
    /// The first byte of the document's response.
    pub first_byte: Option<SimTime>,
    /// The last object's last byte.
    pub loaded: Option<SimTime>,
    /// Response bytes received (bodies and headers).
    pub bytes: u64,
    pub objects: u32,
    pub connections: u32,
    /// A connection failed (its sender gave up): the page never loaded.
    pub failed: bool,
}

#[derive(Clone, Debug)]
struct Obj {
    host: u32,
    body: u64,
    children: Vec<u32>,
    done: bool,
}

#[derive(Clone, Copy, Debug)]
enum AtServer {
    TlsFlight(u32),
    Request(u32),
}

#[derive(Clone, Copy, Debug)]
enum AtClient {
    TlsFlight(u32),
    FirstByte,
    Object(u32),
}

#[derive(Clone, Debug)]
struct Conn {
    host: u32,
    state: State,
    /// The client's stream: requests and TLS flights, waited on by the server.
    up: Waits<AtServer>,
    /// The server's stream: responses and TLS flights, waited on by the client.
    down: Waits<AtClient>,
    /// HTTP/1.1: the object in flight on it.
    busy: Option<u32>,
    requests: u32,
    responses: u32,
}

#[derive(Clone, Debug)]
pub struct Session {
    spec: WebSpec,
    objs: Vec<Obj>,
    /// Objects found and not yet requested, per host, in the order found.
    pending: Vec<std::collections::VecDeque<u32>>,
    /// This page's connections: (number, state); numbers count every connection the session opened.
    conns: Vec<(u32, Conn)>,
    opened: u32,
    page: Option<PageRecord>,
    left: u32,
    pub records: Vec<PageRecord>,
    done: bool,
    /// Objects of the page not yet complete.
    left_objects: usize,
    /// Scratch: the hosts an object's completion touches.
    hosts_touched: Vec<u32>,
}

/// HTTP/2 framing (RFC 9113 Sec. 4.1, 6.5, 4.2).
const H2_FRAME_HEADER: u64 = 9;
const H2_MAX_FRAME: u64 = 16_384;
const H2_CLIENT_PREFACE: u64 = 24 + 9 + 18;
const H2_SERVER_SETTINGS: u64 = 27 + 9;

impl Session {
    pub fn new(spec: WebSpec) -> Session {
        let hosts = spec.page.hosts.max(1) as usize;
        Session {
            left: spec.pages,
            spec,
            objs: Vec::new(),
            pending: vec![Default::default(); hosts],
            conns: Vec::new(),
            opened: 0,
            page: None,
            records: Vec::new(),
            done: false,
            left_objects: 0,
            hosts_touched: Vec::new(),
        }
    }

    pub fn modem(&self) -> u32 {
        self.spec.modem
    }

    pub fn start_at(&self) -> SimTime {
        self.spec.start
    }

    pub fn spec(&self) -> &WebSpec {
        &self.spec
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        self.next_page(now, out);
    }

    fn next_page(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        if self.left == 0 || self.spec.stop.is_some_and(|s| now > s) {
            self.done = true;
            out.push(Cmd::Done);
            return;
        }
        self.left -= 1;
        let p = &self.spec.page;
        let hosts = p.hosts.max(1);
        let mut objs = vec![Obj { host: 0, body: p.document, children: Vec::new(), done: false }];
        let n1 = p.objects.len();
        for (k, &b) in p.objects.iter().chain(&p.subobjects).enumerate() {
            let id = (k + 1) as u32;
            let parent = if k < n1 { 0 } else { 1 + (k - n1) % n1 };
            objs[parent].children.push(id);
            objs.push(Obj { host: id % hosts, body: b, children: Vec::new(), done: false });
        }
        self.objs = objs;
        self.left_objects = self.objs.len();
        self.page = Some(PageRecord {
            page: self.records.len() as u32,
            start: now,
            first_byte: None,
            loaded: None,
            bytes: 0,
            objects: self.objs.len() as u32,
            connections: 0,
            failed: false,
        });
        self.found(0);
        self.dispatch(0, out);
    }

    fn found(&mut self, obj: u32) {
        let host = self.objs[obj as usize].host as usize;
        self.pending[host].push_back(obj);
    }

    fn conn(&mut self, number: u32) -> Option<&mut Conn> {
        self.conns.iter_mut().find(|(n, _)| *n == number).map(|(_, c)| c)
    }

    fn open(&mut self, host: u32, out: &mut Vec<Cmd>) {
        out.push(Cmd::Open);
        let conn = Conn {
            host,
            state: State::Connecting,
            up: Waits::default(),
            down: Waits::default(),
            busy: None,
            requests: 0,
            responses: 0,
        };
        self.conns.push((self.opened, conn));
        self.opened += 1;
        if let Some(p) = &mut self.page {
            p.connections += 1;
        }
    }

    /// Give host `host`'s waiting objects to its connections, opening connections as allowed.
    fn dispatch(&mut self, host: u32, out: &mut Vec<Cmd>) {
        let h = host as usize;
        if self.pending[h].is_empty() {
            return;
        }
        let mine = |c: &Conn| c.host == host && c.state != State::Closed;
        if self.spec.http2 {
            match self.conns.iter().position(|(_, c)| mine(c)) {
                None => self.open(host, out),
                Some(i) if self.conns[i].1.state == State::Ready => {
                    let n = self.conns[i].0;
                    while let Some(o) = self.pending[h].pop_front() {
                        self.request(n, o, out);
                    }
                }
                Some(_) => {}
            }
            return;
        }
        while let Some(i) = self.conns.iter().position(|(_, c)| mine(c) && c.state == State::Ready && c.busy.is_none())
        {
            let Some(o) = self.pending[h].pop_front() else { return };
            let n = self.conns[i].0;
            self.conns[i].1.busy = Some(o);
            self.request(n, o, out);
        }
        let open = self.conns.iter().filter(|(_, c)| mine(c)).count() as u32;
        let opening = self.conns.iter().filter(|(_, c)| mine(c) && c.state != State::Ready).count();
        let want = self.pending[h].len().saturating_sub(opening) as u32;
        for _ in 0..want.min(self.spec.connections_per_host.saturating_sub(open)) {
            self.open(host, out);
        }
    }

    fn request(&mut self, n: u32, obj: u32, out: &mut Vec<Cmd>) {
        let (h2, tls) = (self.spec.http2, self.spec.tls);
        let mut bytes = self.spec.request_bytes;
        let c = self.conn(n).expect("the connection asked for");
        if c.requests == 0 {
            bytes += tls.with_first_request() + if h2 { H2_CLIENT_PREFACE } else { 0 };
        }
        c.requests += 1;
        c.up.write(bytes, AtServer::Request(obj));
        out.push(Cmd::Write { conn: n, to_server: true, bytes });
    }

    pub fn opened(&mut self, _now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        let tls = self.spec.tls;
        let Some(c) = self.conn(conn) else { return };
        if c.state != State::Connecting {
            return;
        }
        if tls.round_trips > 0 {
            c.state = State::Tls;
            let bytes = c.up.write(tls.client_flight(0), AtServer::TlsFlight(0));
            out.push(Cmd::Write { conn, to_server: true, bytes });
        } else {
            c.state = State::Ready;
            let host = c.host;
            self.dispatch(host, out);
        }
    }

    pub fn delivered(&mut self, now: SimTime, conn: u32, at_server: bool, upto: u64, out: &mut Vec<Cmd>) {
        let (tls, h2) = (self.spec.tls, self.spec.http2);
        let header = self.spec.response_header_bytes;
        let Some(c) = self.conns.iter_mut().find(|(n, _)| *n == conn).map(|(_, c)| c) else { return };
        if c.state == State::Closed {
            return;
        }
        if at_server {
            let mut batch = Vec::new();
            for what in c.up.reached(upto) {
                match what {
                    AtServer::TlsFlight(r) => {
                        let bytes = c.down.write(tls.server_flight(r), AtClient::TlsFlight(r));
                        out.push(Cmd::Write { conn, to_server: false, bytes });
                    }
                    AtServer::Request(o) => batch.push(o),
                }
            }
            if !batch.is_empty() {
                let bodies: Vec<(u32, u64)> = batch.iter().map(|&o| (o, self.objs[o as usize].body)).collect();
                let start = c.down.written;
                let first = c.responses == 0;
                c.responses += batch.len() as u32;
                let ends = if h2 {
                    h2_layout(start + if first { H2_SERVER_SETTINGS } else { 0 }, &bodies, header)
                } else {
                    let mut at = start;
                    let mut v = Vec::with_capacity(bodies.len());
                    for &(o, b) in &bodies {
                        v.push((o, at + 1, at + header + b));
                        at += header + b;
                    }
                    v
                };
                // The document's first response byte, then each response's last, in stream order.
                let mut ends = ends;
                ends.sort_by_key(|&(_, _, end)| end);
                if let Some(&(_, first_byte, _)) = ends.iter().find(|(o, _, _)| *o == 0) {
                    c.down.at(first_byte, AtClient::FirstByte);
                }
                for &(o, _, end) in &ends {
                    c.down.at(end, AtClient::Object(o));
                }
                let end = ends.iter().map(|e| e.2).max().unwrap_or(start);
                c.down.written = end;
                out.push(Cmd::Write { conn, to_server: false, bytes: end - start });
            }
            return;
        }
        let host = c.host;
        for what in c.down.reached(upto) {
            match what {
                AtClient::TlsFlight(r) => {
                    let Some(c) = self.conn(conn) else { return };
                    if r + 1 < tls.round_trips {
                        let bytes = c.up.write(tls.client_flight(r + 1), AtServer::TlsFlight(r + 1));
                        out.push(Cmd::Write { conn, to_server: true, bytes });
                    } else {
                        c.state = State::Ready;
                        self.dispatch(host, out);
                    }
                }
                AtClient::FirstByte => {
                    if let Some(p) = &mut self.page {
                        p.first_byte.get_or_insert(now);
                    }
                }
                AtClient::Object(o) => {
                    let obj = &mut self.objs[o as usize];
                    obj.done = true;
                    let (body, children) = (obj.body, std::mem::take(&mut obj.children));
                    self.left_objects -= 1;
                    if let Some(p) = &mut self.page {
                        p.bytes += body + header;
                    }
                    if let Some(c) = self.conn(conn) {
                        c.busy = None;
                    }
                    // The objects it holds are found now: each host with new ones (and this
                    // connection's, now idle) gives them out.
                    let mut hosts = std::mem::take(&mut self.hosts_touched);
                    hosts.clear();
                    hosts.push(host);
                    for &ch in &children {
                        self.found(ch);
                        hosts.push(self.objs[ch as usize].host);
                    }
                    hosts.sort_unstable();
                    hosts.dedup();
                    for &h in &hosts {
                        self.dispatch(h, out);
                    }
                    self.hosts_touched = hosts;
                    if self.left_objects == 0 {
                        return self.page_over(now, false, out);
                    }
                }
            }
        }
    }

    fn page_over(&mut self, now: SimTime, failed: bool, out: &mut Vec<Cmd>) {
        let Some(mut p) = self.page.take() else { return };
        if !failed {
            p.loaded = Some(now);
        }
        p.failed = failed;
        self.records.push(p);
        for (n, c) in &mut self.conns {
            if c.state != State::Closed {
                c.state = State::Closed;
                out.push(Cmd::Close { conn: *n });
            }
        }
        self.conns.clear();
        for q in &mut self.pending {
            q.clear();
        }
        if self.left == 0 {
            self.done = true;
            out.push(Cmd::Done);
        } else {
            out.push(Cmd::Wake(now + self.spec.think));
        }
    }

    pub fn wake(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        if self.page.is_none() && !self.done {
            self.next_page(now, out);
        }
    }

    pub fn failed(&mut self, now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        if self.conn(conn).is_some_and(|c| c.state != State::Closed) {
            self.page_over(now, true, out);
        }
    }

    /// The page under way when the run ended, unfinished.
    pub fn unfinished(&self) -> Option<&PageRecord> {
        self.page.as_ref()
    }
}

/// HTTP/2: the responses to `bodies` written from stream offset `start`: each object's HEADERS
/// frame in request order, then their DATA frames round-robin. Returns, per object, the stream's
/// length when its first response byte has arrived and when its last has.
fn h2_layout(start: u64, bodies: &[(u32, u64)], header: u64) -> Vec<(u32, u64, u64)> {
    let mut at = start;
    let mut out: Vec<(u32, u64, u64)> = Vec::with_capacity(bodies.len());
    for &(o, _) in bodies {
        out.push((o, at + 1, 0));
        at += H2_FRAME_HEADER + header;
        out.last_mut().expect("pushed").2 = at;
    }
    let mut left: Vec<u64> = bodies.iter().map(|b| b.1).collect();
    while left.iter().any(|&l| l > 0) {
        for (i, l) in left.iter_mut().enumerate() {
            if *l == 0 {
                continue;
            }
            let n = (*l).min(H2_MAX_FRAME);
            *l -= n;
            at += H2_FRAME_HEADER + n;
            out[i].2 = at;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(http2: bool, page: Page) -> WebSpec {
        WebSpec {
            modem: 0,
            page,
            http2,
            connections_per_host: 6,
            tls: Tls { round_trips: 0 },
            request_bytes: 500,
            response_header_bytes: 300,
            pages: 1,
            think: 0,
            start: SimTime::ZERO,
            stop: None,
        }
    }

    #[test]
    fn profiles_keep_their_sources_totals() {
        for p in &PROFILES {
            let page = Page::profile(p.name).unwrap();
            let n = 1 + page.objects.len() + page.subobjects.len();
            assert_eq!(n as u32, p.requests, "{}", p.name);
            let total: u64 = page.document + page.objects.iter().chain(&page.subobjects).sum::<u64>();
            assert!(p.total_bytes - total < n as u64, "{}: {total}", p.name);
        }
    }

    #[test]
    fn h2_frames_interleave_round_robin() {
        // Two responses of 20,000 and 10,000 bytes, 100-byte headers, from offset 0: HEADERS 109 +
        // 109, then DATA 16,393 (a), 10,009 (b: done), 3,625 (a: done).
        let l = h2_layout(0, &[(1, 20_000), (2, 10_000)], 100);
        assert_eq!(l, vec![(1, 1, 218 + 16_393 + 10_009 + 3_625), (2, 110, 218 + 16_393 + 10_009)]);
    }

    #[test]
    fn http11_opens_a_connection_per_waiting_object_up_to_the_limit() {
        let page = Page { document: 1000, objects: vec![10; 8], subobjects: vec![], hosts: 1 };
        let mut s = Session::new(spec(false, page));
        let mut out = Vec::new();
        s.start(SimTime::ZERO, &mut out);
        assert_eq!(out, vec![Cmd::Open]);
        out.clear();
        s.opened(SimTime::ZERO, 0, &mut out);
        assert_eq!(out, vec![Cmd::Write { conn: 0, to_server: true, bytes: 500 }]);
        out.clear();
        s.delivered(SimTime(1), 0, true, 500, &mut out);
        assert_eq!(out, vec![Cmd::Write { conn: 0, to_server: false, bytes: 1300 }]);
        out.clear();
        s.delivered(SimTime(2), 0, false, 1300, &mut out);
        // Eight objects found: one on connection 0, five new connections (six in all).
        let opens = out.iter().filter(|c| **c == Cmd::Open).count();
        assert_eq!(opens, 5, "{out:?}");
        assert_eq!(out[0], Cmd::Write { conn: 0, to_server: true, bytes: 500 });
    }
}
