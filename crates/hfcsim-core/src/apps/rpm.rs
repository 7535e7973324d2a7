//! The responsiveness test (`[[rpm]]`): draft-ietf-ippm-responsiveness-09 (the editors' copy,
//! github.com/network-quality/draft-ietf-ippm-responsiveness; -08 of 20 October 2025 is the latest
//! on the datatracker), "Responsiveness under Working Conditions". Sections cited by title.
//!
//! - An idle phase first: foreign probes alone, on an otherwise idle network ("Investigating Poor
//!   Responsiveness": "Idle latency (measured at the beginning from the initial connections)").
//! - Then the working conditions ("Working Conditions", "Concurrent vs Sequential Uplink and
//!   Downlink": upload and download at once, as Apple's networkQuality does): `connections`
//!   load-generating HTTP/2 connections each way, a GET of an endless object and a POST of an
//!   endless body. Chosen: a fixed number of connections from the load's start, not the draft's
//!   ramp ("Final Algorithm": INP = 1 connection, INC = 1 more each ID = 5 s interval until the
//!   moving average of goodput over MAD = 4 intervals is within SDT = 5 %); probes started after
//!   `warmup` count.
//! - Each `probe_interval` a foreign probe and a self probe ("Measuring Responsiveness"): the
//!   foreign one on a new connection (its TCP handshake `tcp_f`, its TLS handshake per round trip
//!   `tls_f`, its GET of the 1-byte object `http_f`), the self one a GET of the 1-byte object on a
//!   load-generating connection (`http_l`), the connections taken in turn (chosen: round robin,
//!   downloads and uploads alternately, for the draft's "uniformly and randomly").
//! - "Aggregating the Measurements": single-sided trimmed means at TMP = 95 %, and
//!   RPM = (60 / ((TM(tcp_f) + TM(tls_f) + TM(http_f)) / 3) + 60 / TM(http_l)) / 2, or without TLS
//!   60 / ((TM(tcp_f) + TM(http_f)) / 2) for the foreign part (`rpm_of`).
//!
//! The senders of the endless objects write as their socket buffer allows (`Cmd::WantWrite`): a
//! probe's response goes behind what is queued in the socket and the network, not behind the rest
//! of the object.

use super::{Cmd, ConnState as State, Tls, Waits};
use crate::time::{Nanos, SimTime};

/// HTTP/2 framing (RFC 9113 Sec. 4.1, 6.5, 3.4), as apps/web.rs counts it.
const H2_FRAME_HEADER: u64 = 9;
const H2_CLIENT_PREFACE: u64 = 24 + 9 + 18;
const H2_SERVER_SETTINGS: u64 = 27 + 9;
/// "Test Parameters": TMP, the trimmed mean's percentage.
pub const TMP: f64 = 0.95;

/// `[[rpm]]` as the engine runs it.
#[derive(Clone, Debug)]
pub struct RpmSpec {
    pub modem: u32,
    pub start: SimTime,
    /// The idle phase before the load, foreign probes alone.
    pub idle: Nanos,
    /// Load-generating connections each way.
    pub connections: u32,
    /// The loaded phase.
    pub duration: Nanos,
    /// From the load's start until probes count.
    pub warmup: Nanos,
    pub probe_interval: Nanos,
    pub tls: Tls,
    pub request_bytes: u64,
    pub response_header_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Foreign(u32),
    Down,
    Up,
}

#[derive(Clone, Copy, Debug)]
enum AtServer {
    TlsFlight(u32),
    /// A GET of the small object (a probe's).
    Get(u32),
    /// The GET of the endless object.
    Bulk,
}

#[derive(Clone, Copy, Debug)]
enum AtClient {
    TlsFlight(u32),
    Response(u32),
}

#[derive(Clone, Debug)]
struct Conn {
    role: Role,
    state: State,
    up: Waits<AtServer>,
    down: Waits<AtClient>,
    requests: u32,
    responses: u32,
    /// When the TLS handshake started (the connection opened at the client).
    tls_from: SimTime,
    /// Bytes received in order: at the client (down), at the server (up).
    got: [u64; 2],
}

/// One probe: its times, s; None where it did not happen.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// On a load-generating connection (a self probe).
    pub own: bool,
    /// Before the load.
    pub idle: bool,
    pub start: SimTime,
    pub tcp: Option<Nanos>,
    /// Per round trip.
    pub tls: Option<Nanos>,
    pub http: Option<Nanos>,
    /// When its current step began.
    from: SimTime,
}

#[derive(Clone, Debug)]
pub struct Test {
    spec: RpmSpec,
    conns: Vec<Conn>,
    pub probes: Vec<Probe>,
    next_probe: SimTime,
    load_started: bool,
    /// Goodput's bytes (down, up) when the measurement began, and when it ended.
    pub counted_from: Option<[u64; 2]>,
    pub counted_to: Option<[u64; 2]>,
    turn: u32,
    pub done: bool,
    pub failed: bool,
}

impl Test {
    pub fn new(spec: RpmSpec) -> Test {
        Test {
            next_probe: spec.start,
            spec,
            conns: Vec::new(),
            probes: Vec::new(),
            load_started: false,
            counted_from: None,
            counted_to: None,
            turn: 0,
            done: false,
            failed: false,
        }
    }

    pub fn spec(&self) -> &RpmSpec {
        &self.spec
    }

    pub fn modem(&self) -> u32 {
        self.spec.modem
    }

    pub fn start_at(&self) -> SimTime {
        self.spec.start
    }

    fn load_at(&self) -> SimTime {
        self.spec.start + self.spec.idle
    }

    fn measure_at(&self) -> SimTime {
        self.load_at() + self.spec.warmup
    }

    fn end_at(&self) -> SimTime {
        self.load_at() + self.spec.duration
    }

    /// Load-generating connections used (both ways).
    pub fn load_connections(&self) -> u32 {
        self.conns.iter().filter(|c| !matches!(c.role, Role::Foreign(_))).count() as u32
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        self.wake(now, out);
    }

    fn open(&mut self, role: Role, out: &mut Vec<Cmd>) {
        out.push(Cmd::Open);
        self.conns.push(Conn {
            role,
            state: State::Connecting,
            up: Waits::default(),
            down: Waits::default(),
            requests: 0,
            responses: 0,
            tls_from: SimTime::ZERO,
            got: [0, 0],
        });
    }

    fn goodput_bytes(&self) -> [u64; 2] {
        let mut b = [0, 0];
        for c in &self.conns {
            match c.role {
                Role::Down => b[0] += c.got[0],
                Role::Up => b[1] += c.got[1],
                Role::Foreign(_) => {}
            }
        }
        b
    }

    pub fn wake(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        if self.done {
            return;
        }
        if now >= self.end_at() {
            return self.finish(now, out);
        }
        if !self.load_started && now >= self.load_at() {
            self.load_started = true;
            for _ in 0..self.spec.connections {
                self.open(Role::Down, out);
                self.open(Role::Up, out);
            }
        }
        if self.load_started && self.counted_from.is_none() && now >= self.measure_at() {
            self.counted_from = Some(self.goodput_bytes());
        }
        while self.next_probe <= now {
            self.next_probe = self.next_probe + self.spec.probe_interval.max(1);
            self.launch(now, out);
        }
        // The next thing due: a probe, the load's start, the measurement's start, the end.
        let mut next = self.next_probe.min(self.end_at());
        if !self.load_started {
            next = next.min(self.load_at());
        } else if self.counted_from.is_none() {
            next = next.min(self.measure_at());
        }
        out.push(Cmd::Wake(next));
    }

    /// A foreign probe, and under load a self probe.
    fn launch(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        let idle = !self.load_started;
        let p = self.probes.len() as u32;
        self.probes.push(Probe { own: false, idle, start: now, tcp: None, tls: None, http: None, from: now });
        self.open(Role::Foreign(p), out);
        if idle {
            return;
        }
        let ready: Vec<usize> = (0..self.conns.len())
            .filter(|&i| !matches!(self.conns[i].role, Role::Foreign(_)) && self.conns[i].state == State::Ready)
            .collect();
        if ready.is_empty() {
            return;
        }
        let i = ready[self.turn as usize % ready.len()];
        self.turn = self.turn.wrapping_add(1);
        let p = self.probes.len() as u32;
        self.probes.push(Probe { own: true, idle, start: now, tcp: None, tls: None, http: None, from: now });
        self.get(i, AtServer::Get(p), out);
    }

    /// The client writes a GET on connection `i`: behind what its socket holds.
    fn get(&mut self, i: usize, what: AtServer, out: &mut Vec<Cmd>) {
        let tls = self.spec.tls;
        let c = &mut self.conns[i];
        let mut bytes = self.spec.request_bytes;
        if c.requests == 0 {
            bytes += tls.with_first_request() + H2_CLIENT_PREFACE;
        }
        c.requests += 1;
        c.up.write(bytes, what);
        out.push(Cmd::Write { conn: i as u32, to_server: true, bytes });
        if c.role == Role::Up && matches!(what, AtServer::Bulk) {
            // The POST's body follows its headers, as the socket takes it.
            out.push(Cmd::WantWrite { conn: i as u32, to_server: true });
        }
    }

    pub fn opened(&mut self, now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        let tls = self.spec.tls;
        let Some(c) = self.conns.get_mut(conn as usize) else { return };
        if c.state != State::Connecting {
            return;
        }
        if let Role::Foreign(p) = c.role {
            let pr = &mut self.probes[p as usize];
            pr.tcp = Some(now - pr.from);
            pr.from = now;
        }
        c.tls_from = now;
        if tls.round_trips > 0 {
            c.state = State::Tls;
            let bytes = c.up.write(tls.client_flight(0), AtServer::TlsFlight(0));
            out.push(Cmd::Write { conn, to_server: true, bytes });
        } else {
            self.ready(now, conn as usize, out);
        }
    }

    fn ready(&mut self, now: SimTime, i: usize, out: &mut Vec<Cmd>) {
        let c = &mut self.conns[i];
        c.state = State::Ready;
        match c.role {
            Role::Foreign(p) => {
                let pr = &mut self.probes[p as usize];
                pr.from = now;
                self.get(i, AtServer::Get(p), out);
            }
            Role::Down | Role::Up => self.get(i, AtServer::Bulk, out),
        }
    }

    pub fn delivered(&mut self, now: SimTime, conn: u32, at_server: bool, upto: u64, out: &mut Vec<Cmd>) {
        let (tls, header) = (self.spec.tls, self.spec.response_header_bytes);
        let i = conn as usize;
        let Some(c) = self.conns.get_mut(i) else { return };
        if c.state == State::Closed {
            return;
        }
        c.got[usize::from(at_server)] = upto;
        if at_server {
            for what in c.up.reached(upto) {
                let first = c.responses == 0;
                let settings = if first { H2_SERVER_SETTINGS } else { 0 };
                match what {
                    AtServer::TlsFlight(r) => {
                        let bytes = c.down.write(tls.server_flight(r), AtClient::TlsFlight(r));
                        out.push(Cmd::Write { conn, to_server: false, bytes });
                    }
                    AtServer::Get(p) => {
                        // HEADERS and a DATA frame of the 1-byte object, after what the socket holds.
                        c.responses += 1;
                        let bytes = settings + H2_FRAME_HEADER + header + H2_FRAME_HEADER + 1;
                        c.down.write(bytes, AtClient::Response(p));
                        out.push(Cmd::Write { conn, to_server: false, bytes });
                    }
                    // Chosen: the server answers the POST of the endless body only when it ends
                    // (never here).
                    AtServer::Bulk => {
                        if c.role == Role::Down {
                            c.responses += 1;
                            // The endless object's HEADERS, then its DATA as the socket takes it.
                            let bytes = settings + H2_FRAME_HEADER + header;
                            c.down.written += bytes;
                            out.push(Cmd::Write { conn, to_server: false, bytes });
                            out.push(Cmd::WantWrite { conn, to_server: false });
                        }
                    }
                }
            }
            return;
        }
        for what in c.down.reached(upto) {
            match what {
                AtClient::TlsFlight(r) => {
                    let c = &mut self.conns[i];
                    if r + 1 < tls.round_trips {
                        let bytes = c.up.write(tls.client_flight(r + 1), AtServer::TlsFlight(r + 1));
                        out.push(Cmd::Write { conn, to_server: true, bytes });
                    } else {
                        if let Role::Foreign(p) = c.role {
                            let per = (now - c.tls_from) / tls.round_trips.max(1) as Nanos;
                            self.probes[p as usize].tls = Some(per);
                        }
                        self.ready(now, i, out);
                    }
                }
                AtClient::Response(p) => {
                    let pr = &mut self.probes[p as usize];
                    pr.http = Some(now - pr.from);
                    let c = &mut self.conns[i];
                    if matches!(c.role, Role::Foreign(_)) {
                        c.state = State::Closed;
                        out.push(Cmd::Close { conn });
                    }
                }
            }
        }
    }

    /// The socket of `conn`'s stream (toward the server or the client) takes `room` more bytes: the
    /// endless object's sender writes them and waits for room again.
    pub fn writable(&mut self, _now: SimTime, conn: u32, to_server: bool, room: u64, out: &mut Vec<Cmd>) {
        let Some(c) = self.conns.get_mut(conn as usize) else { return };
        if c.state == State::Closed || self.done || room == 0 {
            return;
        }
        // Chosen: DATA frames' 9-byte headers (0.05 % of 16 KB frames) are not set apart.
        if to_server {
            c.up.written += room;
        } else {
            c.down.written += room;
        }
        out.push(Cmd::Write { conn, to_server, bytes: room });
        out.push(Cmd::WantWrite { conn, to_server });
    }

    pub fn failed(&mut self, now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        let Some(c) = self.conns.get_mut(conn as usize) else { return };
        if c.state == State::Closed {
            return;
        }
        c.state = State::Closed;
        out.push(Cmd::Close { conn });
        // "Final Algorithm": "if at any point one of these connections terminates with an error,
        // the test should be aborted". A foreign probe's connection failing leaves its probe open.
        if !matches!(c.role, Role::Foreign(_)) {
            self.failed = true;
            self.finish(now, out);
        }
    }

    fn finish(&mut self, _now: SimTime, out: &mut Vec<Cmd>) {
        if self.done {
            return;
        }
        self.done = true;
        if self.counted_from.is_some() {
            self.counted_to = Some(self.goodput_bytes());
        }
        for (i, c) in self.conns.iter_mut().enumerate() {
            if c.state != State::Closed {
                c.state = State::Closed;
                out.push(Cmd::Close { conn: i as u32 });
            }
        }
        out.push(Cmd::Done);
    }

    /// The result at the run's end `end`.
    pub fn result(&self, end: SimTime) -> RpmResult {
        let s = |n: Nanos| n as f64 / 1e9;
        let from = self.measure_at();
        let counted = |p: &&Probe| !p.idle && p.start >= from;
        let foreign: Vec<&Probe> = self.probes.iter().filter(|p| !p.own).filter(counted).collect();
        let own: Vec<&Probe> = self.probes.iter().filter(|p| p.own).filter(counted).collect();
        let done_f: Vec<&&Probe> = foreign.iter().filter(|p| p.http.is_some()).collect();
        let tcp: Vec<f64> = done_f.iter().filter_map(|p| p.tcp.map(s)).collect();
        let tls: Vec<f64> = done_f.iter().filter_map(|p| p.tls.map(s)).collect();
        let http: Vec<f64> = done_f.iter().filter_map(|p| p.http.map(s)).collect();
        let self_http: Vec<f64> = own.iter().filter_map(|p| p.http.map(s)).collect();
        let with_tls = self.spec.tls.round_trips > 0;
        let (tm_tcp, tm_tls, tm_http, tm_self) =
            (trimmed_mean(&tcp), trimmed_mean(&tls), trimmed_mean(&http), trimmed_mean(&self_http));
        let rpm = rpm_of(tm_tcp, with_tls.then_some(tm_tls).flatten(), tm_http, tm_self, with_tls);
        let idle: Vec<&Probe> = self.probes.iter().filter(|p| p.idle && p.http.is_some()).collect();
        let itcp: Vec<f64> = idle.iter().filter_map(|p| p.tcp.map(s)).collect();
        let itls: Vec<f64> = idle.iter().filter_map(|p| p.tls.map(s)).collect();
        let ihttp: Vec<f64> = idle.iter().filter_map(|p| p.http.map(s)).collect();
        let idle_rtt = foreign_rtt(
            trimmed_mean(&itcp),
            with_tls.then(|| trimmed_mean(&itls)).flatten(),
            trimmed_mean(&ihttp),
            with_tls,
        );
        let window = self.spec.duration.saturating_sub(self.spec.warmup);
        let to = self.counted_to.or_else(|| (end >= self.end_at()).then(|| self.goodput_bytes()));
        let goodput = |k: usize| match (self.counted_from, to) {
            (Some(a), Some(b)) if window > 0 => Some((b[k] - a[k]) as f64 * 8.0 / s(window)),
            _ => None,
        };
        RpmResult {
            rpm,
            idle_rtt_s: idle_rtt,
            idle_rpm: idle_rtt.map(|r| 60.0 / r),
            tcp_f_s: tm_tcp,
            tls_f_s: if with_tls { tm_tls } else { None },
            http_f_s: tm_http,
            http_l_s: tm_self,
            goodput_down_bps: goodput(0),
            goodput_up_bps: goodput(1),
            foreign_probes: done_f.len() as u32,
            self_probes: self_http.len() as u32,
            idle_probes: idle.len() as u32,
            connections: self.load_connections(),
        }
    }
}

/// What `Test::result` gives.
#[derive(Clone, Debug, PartialEq)]
pub struct RpmResult {
    pub rpm: Option<f64>,
    pub idle_rtt_s: Option<f64>,
    pub idle_rpm: Option<f64>,
    pub tcp_f_s: Option<f64>,
    pub tls_f_s: Option<f64>,
    pub http_f_s: Option<f64>,
    pub http_l_s: Option<f64>,
    pub goodput_down_bps: Option<f64>,
    pub goodput_up_bps: Option<f64>,
    pub foreign_probes: u32,
    pub self_probes: u32,
    pub idle_probes: u32,
    pub connections: u32,
}

/// "Aggregating the Measurements": the single-sided trimmed mean at TMP = 95 %: the mean of the
/// smallest values, the largest 5 % left out. Chosen where the draft is silent: ceil(0.95 n) values
/// are kept (a sample of fewer than 20 loses none; goresponsiveness keeps floor(0.95 n)).
pub fn trimmed_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let keep = ((v.len() as f64 * TMP).ceil() as usize).clamp(1, v.len());
    Some(v[..keep].iter().sum::<f64>() / keep as f64)
}

/// The foreign probes' round trip: the mean of TM(tcp_f), TM(tls_f) and TM(http_f), or without
/// TLS of TM(tcp_f) and TM(http_f) ("For the TCP-Only Case": no zero stands in for tls_f).
pub fn foreign_rtt(tcp: Option<f64>, tls: Option<f64>, http: Option<f64>, with_tls: bool) -> Option<f64> {
    if with_tls {
        Some((tcp? + tls? + http?) / 3.0)
    } else {
        Some((tcp? + http?) / 2.0)
    }
}

/// "Aggregating the Measurements": Foreign_Responsiveness = 60 / foreign round trip,
/// Loaded_Responsiveness = 60 / TM(http_l), RPM their mean (times in s).
pub fn rpm_of(tcp: Option<f64>, tls: Option<f64>, http: Option<f64>, own: Option<f64>, with_tls: bool) -> Option<f64> {
    let foreign = 60.0 / foreign_rtt(tcp, tls, http, with_tls)?;
    let loaded = 60.0 / own?;
    Some((foreign + loaded) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_mean_drops_the_top_five_percent() {
        // 20 values 1..=20: ceil(19) = 19 kept, 20 left out: mean of 1..=19 = 10.
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(trimmed_mean(&v), Some(10.0));
        // 40 values: 38 kept (1..=38, mean 19.5), the two largest (100, 200) left out.
        let mut v: Vec<f64> = (1..=38).map(f64::from).collect();
        v.extend([200.0, 100.0]);
        assert_eq!(trimmed_mean(&v), Some(19.5));
        // 10 values: ceil(9.5) = 10, none left out.
        let v = [5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(trimmed_mean(&v), Some(5.5));
        // 21 values: ceil(19.95) = 20 kept.
        let v: Vec<f64> = (1..=21).map(f64::from).collect();
        assert_eq!(trimmed_mean(&v), Some(10.5));
        assert_eq!(trimmed_mean(&[]), None);
    }

    #[test]
    fn rpm_is_the_mean_of_foreign_and_loaded_responsiveness() {
        // tcp 20 ms, tls 30 ms, http 40 ms: foreign RTT 30 ms, 2000 RPM; self 60 ms: 1000 RPM.
        let r = rpm_of(Some(0.020), Some(0.030), Some(0.040), Some(0.060), true).unwrap();
        assert!((r - 1500.0).abs() < 1e-9, "{r}");
        // Without TLS: (20 + 40) / 2 = 30 ms again.
        let r = rpm_of(Some(0.020), None, Some(0.040), Some(0.060), false).unwrap();
        assert!((r - 1500.0).abs() < 1e-9, "{r}");
        // Every probe one RTT of 25 ms: 60 / 0.025 = 2400.
        let r = rpm_of(Some(0.025), Some(0.025), Some(0.025), Some(0.025), true).unwrap();
        assert!((r - 2400.0).abs() < 1e-9, "{r}");
        assert_eq!(rpm_of(Some(0.02), Some(0.02), Some(0.02), None, true), None);
        assert_eq!(rpm_of(Some(0.02), None, Some(0.02), Some(0.02), true), None);
    }

    fn spec() -> RpmSpec {
        RpmSpec {
            modem: 0,
            start: SimTime::ZERO,
            idle: 1_000_000_000,
            connections: 2,
            duration: 10_000_000_000,
            warmup: 5_000_000_000,
            probe_interval: 500_000_000,
            tls: Tls { round_trips: 1 },
            request_bytes: 300,
            response_header_bytes: 100,
        }
    }

    #[test]
    fn a_self_probe_goes_behind_what_the_socket_holds() {
        let mut t = Test::new(spec());
        let mut out = Vec::new();
        // Idle: a foreign probe at 0 and 0.5 s.
        t.start(SimTime::ZERO, &mut out);
        assert_eq!(out, vec![Cmd::Open, Cmd::Wake(SimTime(500_000_000))]);
        out.clear();
        t.wake(SimTime(500_000_000), &mut out);
        assert_eq!(out, vec![Cmd::Open, Cmd::Wake(SimTime(1_000_000_000))]);
        out.clear();
        // The load at 1 s: two connections each way (2 and 4 down, 3 and 5 up), a foreign probe (6).
        t.wake(SimTime(1_000_000_000), &mut out);
        let opens = out.iter().filter(|c| **c == Cmd::Open).count();
        assert_eq!(opens, 4 + 1, "{out:?}");
        assert_eq!(out.last(), Some(&Cmd::Wake(SimTime(1_500_000_000))));
        out.clear();
        // Connection 2 (down) opens, TLS, ready: its GET of the endless object.
        t.opened(SimTime(1_010_000_000), 2, &mut out);
        assert_eq!(out, vec![Cmd::Write { conn: 2, to_server: true, bytes: 517 }]);
        out.clear();
        t.delivered(SimTime(1_015_000_000), 2, true, 517, &mut out);
        assert_eq!(out, vec![Cmd::Write { conn: 2, to_server: false, bytes: 4000 }]);
        out.clear();
        t.delivered(SimTime(1_020_000_000), 2, false, 4000, &mut out);
        assert_eq!(out, vec![Cmd::Write { conn: 2, to_server: true, bytes: 300 + 74 + 51 }]);
        out.clear();
        t.delivered(SimTime(1_025_000_000), 2, true, 517 + 425, &mut out);
        let head = 36 + 9 + 100;
        assert_eq!(
            out,
            vec![Cmd::Write { conn: 2, to_server: false, bytes: head }, Cmd::WantWrite { conn: 2, to_server: false }]
        );
        out.clear();
        // The socket takes 100,000 bytes of the object.
        t.writable(SimTime(1_025_000_000), 2, false, 100_000, &mut out);
        assert_eq!(
            out,
            vec![
                Cmd::Write { conn: 2, to_server: false, bytes: 100_000 },
                Cmd::WantWrite { conn: 2, to_server: false }
            ]
        );
        out.clear();
        // At 1.5 s a self probe on connection 2 (the only one ready): its GET on the client's stream.
        t.wake(SimTime(1_500_000_000), &mut out);
        assert!(out.contains(&Cmd::Write { conn: 2, to_server: true, bytes: 300 }), "{out:?}");
        out.clear();
        // The server answers behind the 100,000 bytes in its socket, not behind the rest of the object.
        t.delivered(SimTime(1_505_000_000), 2, true, 517 + 425 + 300, &mut out);
        let resp = 9 + 100 + 9 + 1;
        assert_eq!(out, vec![Cmd::Write { conn: 2, to_server: false, bytes: resp }]);
        out.clear();
        let end = 4000 + head + 100_000 + resp;
        t.delivered(SimTime(1_600_000_000), 2, false, end - 1, &mut out);
        let own = t.probes.iter().find(|p| p.own).unwrap();
        assert_eq!(own.http, None);
        t.delivered(SimTime(1_610_000_000), 2, false, end, &mut out);
        let own = t.probes.iter().find(|p| p.own).unwrap();
        assert_eq!(own.http, Some(110_000_000));
    }
}
