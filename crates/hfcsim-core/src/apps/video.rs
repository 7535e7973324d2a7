//! Adaptive video (`[[video]]`): a DASH player fetching segments of `segment_s` seconds, one at a
//! time over one persistent HTTP/1.1 connection, at a bitrate its ABR rule chooses from a ladder.
//!
//! The player (chosen where dash.js and the papers leave the model open, each said here):
//! - segments are constant-bitrate: bitrate x segment_s / 8 bytes of body, after the response's
//!   header;
//! - it asks for the next segment once a download is complete and its buffer holds less than its
//!   target: dash.js's `bufferTimeDefault` (18 s), or `bufferTimeAtTopQuality` (30 s) while at the
//!   ladder's top (dash.js Settings.js `streaming.buffer`); while the buffer is at or above it, the
//!   player waits until the buffer has drained to the target;
//! - playback starts when the first segment is in, stops when the buffer is empty (a rebuffering
//!   event) and resumes when the next segment is in;
//! - the first segment is the ladder's lowest (no throughput known yet);
//! - the video ends when its last segment has played.
//!
//! ABR rules:
//! - `throughput`, dash.js's ThroughputRule (src/streaming/rules/abr/ThroughputRule.js with
//!   ThroughputController.js and ThroughputModel.js, its default `averageCalculationMode` EWMA):
//!   each segment gives a sample, its bytes over its download time from first to last byte
//!   (`useDeadTimeLatency`: the wait for the first byte is left out), with weight 0.0015 x the
//!   download time in ms; a fast and a slow exponentially weighted average with half-lives 3 and 8
//!   (in weight), alpha = 0.5^(weight / half-life), each divided by 1 - 0.5^(total weight /
//!   half-life) for its start-up; the estimate is the smaller of the two times
//!   `bandwidthSafetyFactor` 0.9; the rule picks the highest bitrate no larger than it (else the
//!   lowest).
//! - `bba`, BBA-0 (Huang, Johari, McKeown, Trunnell and Watson, "A Buffer-Based Approach to Rate
//!   Adaptation: Evidence from a Large Video Streaming Service", SIGCOMM 2014, Sec. 4 and
//!   Algorithm 1): the rate map f(B) is the lowest rate while the buffer B is at most the
//!   reservoir r, the highest from r + cushion on, linear in between; with Rate+ and Rate- the
//!   ladder's rates just above and below the previous one, the next is Rmin for B <= r, Rmax for
//!   B >= r + cu, the largest rate below f(B) if f(B) >= Rate+, the smallest above f(B) if
//!   f(B) <= Rate-, else the previous rate.

use super::{Cmd, Tls, Waits};
use crate::time::{Nanos, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Abr {
    Throughput { safety: f64 },
    Bba { reservoir_s: f64, cushion_s: f64 },
}

/// dash.js's EWMA defaults (Settings.js `streaming.abr.throughput.ewma`).
const FAST_HALF_LIFE: f64 = 3.0;
const SLOW_HALF_LIFE: f64 = 8.0;
const WEIGHT_PER_MS: f64 = 0.0015;

/// A named bitrate ladder and its source.
pub struct Ladder {
    pub name: &'static str,
    pub source: &'static str,
    pub bitrates_bps: &'static [u64],
}

/// Apple, "HLS Authoring Specification for Apple Devices", the H.264 16:9 ladder's average
/// bitrates, 145 kb/s (416x234) to 7,800 kb/s (1920x1080).
pub const LADDERS: [Ladder; 1] = [Ladder {
    name: "apple-hls-h264",
    source: "Apple HLS Authoring Specification for Apple Devices, H.264 16:9 ladder (145 kb/s to 7.8 Mb/s)",
    bitrates_bps: &[145_000, 365_000, 730_000, 1_100_000, 2_000_000, 3_000_000, 4_500_000, 6_000_000, 7_800_000],
}];

#[derive(Clone, Debug)]
pub struct VideoSpec {
    pub modem: u32,
    pub start: SimTime,
    pub duration_s: f64,
    pub segment_s: f64,
    pub bitrates_bps: Vec<u64>,
    pub abr: Abr,
    pub buffer_s: f64,
    pub top_buffer_s: f64,
    pub tls: Tls,
    pub request_bytes: u64,
    pub response_header_bytes: u64,
}

/// One segment as it was fetched.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentRecord {
    pub segment: u32,
    pub bitrate_bps: u64,
    pub requested: SimTime,
    pub first_byte: Option<SimTime>,
    pub done: Option<SimTime>,
    /// The buffer when it was asked for, s.
    pub buffer_s: f64,
}

/// The video's result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VideoRecord {
    pub startup: Option<Nanos>,
    pub rebuffer: Nanos,
    pub rebuffers: u32,
    /// The video has played to its end.
    pub finished: Option<SimTime>,
    pub failed: bool,
    /// When it ended without playing to its end (its connection failed).
    pub ended: Option<SimTime>,
}

#[derive(Clone, Copy, Debug)]
enum AtServer {
    TlsFlight(u32),
    Request(u32),
}

#[derive(Clone, Copy, Debug)]
enum AtClient {
    TlsFlight(u32),
    FirstByte(u32),
    Segment(u32),
}

#[derive(Clone, Debug)]
pub struct Player {
    spec: VideoSpec,
    segments: u32,
    up: Waits<AtServer>,
    down: Waits<AtClient>,
    /// Round trips of TLS done; the connection is ready when they are all done.
    ready: bool,
    requests: u32,
    /// The buffer, s, as it was at `at`.
    buffer: f64,
    at: SimTime,
    playing: bool,
    stalled_since: Option<SimTime>,
    /// dash.js's EWMA state: fast and slow estimates (b/s) and the total weight.
    fast: f64,
    slow: f64,
    weight: f64,
    level: usize,
    waiting: bool,
    pub records: Vec<SegmentRecord>,
    pub result: VideoRecord,
    done: bool,
}

impl Player {
    pub fn new(spec: VideoSpec) -> Player {
        let segments = (spec.duration_s / spec.segment_s - 1e-9).ceil().max(1.0) as u32;
        Player {
            segments,
            spec,
            up: Waits::default(),
            down: Waits::default(),
            ready: false,
            requests: 0,
            buffer: 0.0,
            at: SimTime::ZERO,
            playing: false,
            stalled_since: None,
            fast: 0.0,
            slow: 0.0,
            weight: 0.0,
            level: 0,
            waiting: false,
            records: Vec::new(),
            result: VideoRecord::default(),
            done: false,
        }
    }

    pub fn modem(&self) -> u32 {
        self.spec.modem
    }

    pub fn start_at(&self) -> SimTime {
        self.spec.start
    }

    pub fn spec(&self) -> &VideoSpec {
        &self.spec
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        self.at = now;
        out.push(Cmd::Open);
    }

    pub fn opened(&mut self, now: SimTime, _conn: u32, out: &mut Vec<Cmd>) {
        let tls = self.spec.tls;
        if tls.round_trips > 0 {
            let bytes = self.up.write(tls.client_flight(0), AtServer::TlsFlight(0));
            out.push(Cmd::Write { conn: 0, to_server: true, bytes });
        } else {
            self.ready = true;
            self.request(now, out);
        }
    }

    /// The buffer now, playing it out since `at` (a stall starts where it ran dry).
    fn advance(&mut self, now: SimTime) {
        let elapsed = (now - self.at.min(now)) as f64 / 1e9;
        if self.playing {
            if self.buffer >= elapsed {
                self.buffer -= elapsed;
            } else {
                let dry = self.at + (self.buffer * 1e9).round() as Nanos;
                self.buffer = 0.0;
                self.playing = false;
                if self.records.len() < self.segments as usize || self.down_pending() {
                    self.stalled_since = Some(dry);
                    self.result.rebuffers += 1;
                }
            }
        }
        self.at = now;
    }

    fn down_pending(&self) -> bool {
        self.records.last().is_some_and(|r| r.done.is_none())
    }

    fn target(&self) -> f64 {
        if self.level + 1 == self.spec.bitrates_bps.len() {
            self.spec.top_buffer_s
        } else {
            self.spec.buffer_s
        }
    }

    fn choose(&self) -> usize {
        let rates = &self.spec.bitrates_bps;
        match self.spec.abr {
            Abr::Throughput { safety } => {
                if self.weight <= 0.0 {
                    return 0;
                }
                let fast = self.fast / (1.0 - 0.5f64.powf(self.weight / FAST_HALF_LIFE));
                let slow = self.slow / (1.0 - 0.5f64.powf(self.weight / SLOW_HALF_LIFE));
                let estimate = fast.min(slow) * safety;
                rates.iter().rposition(|&r| r as f64 <= estimate).unwrap_or(0)
            }
            Abr::Bba { reservoir_s, cushion_s } => {
                if self.records.is_empty() {
                    return 0;
                }
                let b = self.buffer;
                let (min, max) = (0, rates.len() - 1);
                if b <= reservoir_s {
                    return min;
                }
                if b >= reservoir_s + cushion_s {
                    return max;
                }
                let (lo, hi) = (rates[min] as f64, rates[max] as f64);
                let f = lo + (hi - lo) * (b - reservoir_s) / cushion_s;
                let prev = self.level;
                let plus = rates[(prev + 1).min(max)] as f64;
                let minus = rates[prev.saturating_sub(1)] as f64;
                if f >= plus {
                    rates.iter().rposition(|&r| (r as f64) < f).unwrap_or(min)
                } else if f <= minus {
                    rates.iter().position(|&r| (r as f64) > f).unwrap_or(max)
                } else {
                    prev
                }
            }
        }
    }

    fn request(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        if !self.ready || self.requests >= self.segments || self.down_pending() {
            return;
        }
        self.advance(now);
        if !self.records.is_empty() && self.buffer >= self.target() {
            let wait = ((self.buffer - self.target()) * 1e9).ceil() as Nanos;
            if !self.waiting {
                self.waiting = true;
                out.push(Cmd::Wake(now + wait.max(1)));
            }
            return;
        }
        self.level = self.choose();
        let seg = self.requests;
        self.requests += 1;
        let bitrate = self.spec.bitrates_bps[self.level];
        let mut bytes = self.spec.request_bytes;
        if seg == 0 {
            bytes += self.spec.tls.with_first_request();
        }
        self.up.write(bytes, AtServer::Request(seg));
        out.push(Cmd::Write { conn: 0, to_server: true, bytes });
        self.records.push(SegmentRecord {
            segment: seg,
            bitrate_bps: bitrate,
            requested: now,
            first_byte: None,
            done: None,
            buffer_s: self.buffer,
        });
    }

    pub fn delivered(&mut self, now: SimTime, _conn: u32, at_server: bool, upto: u64, out: &mut Vec<Cmd>) {
        if self.done {
            return;
        }
        if at_server {
            for what in self.up.reached(upto) {
                let seg = match what {
                    AtServer::TlsFlight(r) => {
                        let bytes = self.down.write(self.spec.tls.server_flight(r), AtClient::TlsFlight(r));
                        out.push(Cmd::Write { conn: 0, to_server: false, bytes });
                        continue;
                    }
                    AtServer::Request(seg) => seg,
                };
                let rec = &self.records[seg as usize];
                let body = (rec.bitrate_bps as f64 * self.spec.segment_s / 8.0).round() as u64;
                let bytes = self.spec.response_header_bytes + body;
                let start = self.down.written;
                self.down.at(start + 1, AtClient::FirstByte(seg));
                self.down.write(bytes, AtClient::Segment(seg));
                out.push(Cmd::Write { conn: 0, to_server: false, bytes });
            }
            return;
        }
        for what in self.down.reached(upto) {
            match what {
                AtClient::TlsFlight(r) => {
                    if r + 1 < self.spec.tls.round_trips {
                        let bytes = self.up.write(self.spec.tls.client_flight(r + 1), AtServer::TlsFlight(r + 1));
                        out.push(Cmd::Write { conn: 0, to_server: true, bytes });
                    } else {
                        self.ready = true;
                        self.request(now, out);
                    }
                }
                AtClient::FirstByte(seg) => self.records[seg as usize].first_byte = Some(now),
                AtClient::Segment(seg) => self.segment_in(now, seg, out),
            }
        }
    }

    fn segment_in(&mut self, now: SimTime, seg: u32, out: &mut Vec<Cmd>) {
        self.advance(now);
        let rec = &mut self.records[seg as usize];
        rec.done = Some(now);
        let first = rec.first_byte.unwrap_or(rec.requested);
        let bytes =
            (rec.bitrate_bps as f64 * self.spec.segment_s / 8.0).round() + self.spec.response_header_bytes as f64;
        let ms = (now - first) as f64 / 1e6;
        if ms > 0.0 {
            // dash.js ThroughputModel: the sample in kbit/s over the download time; b/s here.
            let value = bytes * 8.0 / (ms / 1e3);
            let w = WEIGHT_PER_MS * ms;
            let fa = 0.5f64.powf(w / FAST_HALF_LIFE);
            let sa = 0.5f64.powf(w / SLOW_HALF_LIFE);
            self.fast = (1.0 - fa) * value + fa * self.fast;
            self.slow = (1.0 - sa) * value + sa * self.slow;
            self.weight += w;
        }
        self.buffer += self.spec.segment_s;
        if !self.playing {
            match (self.result.startup, self.stalled_since.take()) {
                (None, _) => self.result.startup = Some(now - self.spec.start.min(now)),
                (Some(_), Some(since)) => self.result.rebuffer += now - since.min(now),
                (Some(_), None) => {}
            }
            self.playing = true;
        }
        if self.requests >= self.segments {
            // The last segment is in: the video ends when the buffer has played out.
            let end = now + (self.buffer * 1e9).round() as Nanos;
            self.waiting = true;
            out.push(Cmd::Wake(end));
            return;
        }
        self.request(now, out);
    }

    pub fn wake(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        if self.done {
            return;
        }
        self.waiting = false;
        if self.requests >= self.segments && !self.down_pending() {
            self.advance(now);
            self.result.finished = Some(now);
            self.finish(out);
            return;
        }
        self.request(now, out);
    }

    fn finish(&mut self, out: &mut Vec<Cmd>) {
        self.done = true;
        out.push(Cmd::Close { conn: 0 });
        out.push(Cmd::Done);
    }

    pub fn failed(&mut self, now: SimTime, _conn: u32, out: &mut Vec<Cmd>) {
        if !self.done {
            self.advance(now);
            self.result.failed = true;
            self.result.ended = Some(now);
            self.finish(out);
        }
    }

    /// Rebuffering still under way when the run ended counts up to `end`.
    pub fn rebuffer_at(&self, end: SimTime) -> Nanos {
        let open = match (self.playing, self.stalled_since) {
            (false, Some(since)) => end - since.min(end),
            (true, _) if self.result.startup.is_some() => {
                let dry = self.at + (self.buffer * 1e9).round() as Nanos;
                if dry < end && self.records.len() < self.segments as usize {
                    end - dry
                } else {
                    0
                }
            }
            _ => 0,
        };
        self.result.rebuffer + open
    }

    pub fn segments(&self) -> u32 {
        self.segments
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive a player over a fixed path: each write reaches the other end `half_rtt` later, and
    /// the server's responses arrive at `rate` b/s behind one another.
    fn drive(abr: Abr, rate: f64, half_rtt: Nanos, duration_s: f64) -> Player {
        let spec = VideoSpec {
            modem: 0,
            start: SimTime::ZERO,
            duration_s,
            segment_s: 4.0,
            bitrates_bps: vec![1_000_000, 2_000_000, 4_000_000],
            abr,
            buffer_s: 18.0,
            top_buffer_s: 30.0,
            tls: Tls { round_trips: 0 },
            request_bytes: 0,
            response_header_bytes: 0,
        };
        let mut p = Player::new(spec);
        let mut events: Vec<(SimTime, u8, u64)> = Vec::new(); // (time, kind, arg): 0 open, 1 server, 2 client, 3 wake
        let mut out = Vec::new();
        p.start(SimTime::ZERO, &mut out);
        let (mut up, mut down) = (0u64, 0u64);
        let mut line_free = SimTime::ZERO;
        let mut handle = |now: SimTime, out: &mut Vec<Cmd>, events: &mut Vec<(SimTime, u8, u64)>| {
            for c in out.drain(..) {
                match c {
                    Cmd::Open => events.push((now + 2 * half_rtt, 0, 0)),
                    Cmd::Write { to_server: true, bytes, .. } => {
                        up += bytes;
                        events.push((now + half_rtt, 1, up));
                    }
                    Cmd::Write { to_server: false, bytes, .. } => {
                        let begin = (now + half_rtt).max(line_free);
                        let end = begin + (bytes as f64 * 8.0 / rate * 1e9).round() as Nanos;
                        line_free = end;
                        down += bytes;
                        events.push((begin + 1, 2, down - bytes + 1));
                        events.push((end, 2, down));
                    }
                    Cmd::Wake(at) => events.push((at, 3, 0)),
                    Cmd::Close { .. } | Cmd::Done | Cmd::WantWrite { .. } => {}
                }
            }
        };
        handle(SimTime::ZERO, &mut out, &mut events);
        while !events.is_empty() {
            let i = (0..events.len()).min_by_key(|&i| (events[i].0, i)).unwrap();
            let (t, kind, arg) = events.remove(i);
            match kind {
                0 => p.opened(t, 0, &mut out),
                1 => p.delivered(t, 0, true, arg, &mut out),
                2 => p.delivered(t, 0, false, arg, &mut out),
                _ => p.wake(t, &mut out),
            }
            handle(t, &mut out, &mut events);
        }
        p
    }

    #[test]
    fn throughput_rule_climbs_the_ladder_at_a_fixed_rate() {
        // 10 Mb/s, 20 ms RTT. Segment 0 at 1 Mb/s: 500 KB in 0.4 s; the sample 10 Mb/s with weight
        // 0.6; fast = slow = 10 Mb/s once corrected, x 0.9 = 9 Mb/s: the top rung (4 Mb/s) next.
        let p = drive(Abr::Throughput { safety: 0.9 }, 10e6, 10_000_000, 40.0);
        let rates: Vec<u64> = p.records.iter().map(|r| r.bitrate_bps).collect();
        assert_eq!(
            rates,
            vec![
                1_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000,
                4_000_000
            ]
        );
        // Startup: the handshake (20 ms), the request's round trip (20 ms), 0.4 s of data: 0.44 s.
        assert_eq!(p.result.startup, Some(440_000_000));
        // Segment 1 asked for at 0.44 s with 4 s buffered: 2 MB in 1.6 s, in at 2.06 s with 6.38 s
        // buffered (4 - 1.62 + 4), and no stall while each 4 s segment takes 1.62 s.
        assert_eq!(p.records[1].requested, SimTime(440_000_000));
        assert_eq!(p.records[1].done, Some(SimTime(2_060_000_000)));
        assert_eq!(p.result.rebuffers, 0);
        assert_eq!(p.result.rebuffer, 0);
        // At the top the target is 30 s: the buffer fills to 30 s and then the player waits; the
        // last segment is in before 40 s and plays out to 0.44 + 40 s.
        assert_eq!(p.result.finished, Some(SimTime(40_440_000_000)));
    }

    #[test]
    fn throughput_rule_stalls_when_the_rate_falls_below_the_lowest_rung() {
        // 0.5 Mb/s < 1 Mb/s: every 4 s segment takes 8 s: startup 8.04 s, then a stall of 4.02 s per
        // segment.
        let p = drive(Abr::Throughput { safety: 0.9 }, 0.5e6, 10_000_000, 12.0);
        assert!(p.records.iter().all(|r| r.bitrate_bps == 1_000_000));
        assert_eq!(p.result.startup, Some(8_040_000_000));
        assert_eq!(p.result.rebuffers, 2);
        // Segment 1: asked at 8.04, in at 8.04 + 0.02 + 8 = 16.06; the buffer ran dry at 12.04.
        assert_eq!(p.result.rebuffer, 2 * 4_020_000_000);
    }

    #[test]
    fn bba_follows_its_rate_map() {
        // Reservoir 4 s, cushion 8 s on a 1/2/4 Mb/s ladder at 10 Mb/s: the map is 1 Mb/s up to 4 s
        // of buffer, 4 Mb/s from 12 s, linear between (f(B) = 1 + 3 (B - 4) / 8 Mb/s).
        let p = drive(Abr::Bba { reservoir_s: 4.0, cushion_s: 8.0 }, 10e6, 10_000_000, 48.0);
        let rates: Vec<u64> = p.records.iter().map(|r| r.bitrate_bps).collect();
        for r in &p.records {
            let b = r.buffer_s;
            let f = if b <= 4.0 {
                1e6
            } else if b >= 12.0 {
                4e6
            } else {
                1e6 + 3e6 * (b - 4.0) / 8.0
            };
            // BBA-0 never picks a rate above the map's value (the top only from r + cu).
            assert!(r.bitrate_bps as f64 <= f.max(1e6) + 1.0, "{r:?}");
        }
        // Segment 0 (startup) and 1 (buffer 3.6 s <= r) at the lowest; the buffer builds up at
        // 1 Mb/s (4 s of video every 0.41 s) until f(B) passes 2 Mb/s (B >= 6.67 s), then 4 Mb/s
        // once B >= 12 s.
        assert_eq!(&rates[..2], &[1_000_000, 1_000_000]);
        assert!(rates.contains(&2_000_000) && rates.last() == Some(&4_000_000), "{rates:?}");
        assert_eq!(p.result.rebuffers, 0);
    }
}
