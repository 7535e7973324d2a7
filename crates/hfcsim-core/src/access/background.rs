//! Poisson background sources at the stations.
//!
//! Elloumi et al. Sec. 4: "200 stations with on-off sources sending data upstream ... fixed size
//! 48-byte packets (encapsulated in ATM cells) according to a Poisson distribution with a mean
//! arrival rate of lambda = L*UR*48/(53*N)", L the offered load, UR the upstream rate, N the number
//! of stations. In packets per second that is L*UR/(8*53*N): the group offers L of the channel in
//! wire bytes. The same rule with a DOCSIS frame's bytes in place of the 53-byte cell is used for
//! DOCSIS (`per_station_pps`).

use crate::rng::Stream;
use crate::time::{SimTime, NANOS_PER_SEC};

/// Packets per second each of `stations` sources sends so that together they offer `load` of a
/// channel of `rate_bps`, each packet taking `wire_bytes` on the channel.
pub fn per_station_pps(load: f64, rate_bps: u64, wire_bytes: u32, stations: u32) -> f64 {
    if stations == 0 || wire_bytes == 0 {
        return 0.0;
    }
    load * rate_bps as f64 / (8.0 * wire_bytes as f64 * stations as f64)
}

/// The time of the next arrival after `now` of a Poisson process of `pps` packets per second
/// (exponential gaps by inversion, rounded to the nanosecond, at least 1 ns).
pub fn next_arrival(now: SimTime, pps: f64, rng: &mut Stream) -> SimTime {
    let u = 1.0 - rng.uniform(); // (0, 1]
    let gap = (-u.ln() / pps * NANOS_PER_SEC as f64).round();
    SimTime(now.0.saturating_add((gap as u64).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elloumi_rate() {
        // L = 30 %, UR = 3 Mb/s, N = 200, 53-byte cells: 0.3*3e6/(8*53*200) = 10.61 cells/s.
        let pps = per_station_pps(0.3, 3_000_000, 53, 200);
        assert!((pps - 10.613).abs() < 1e-3, "{pps}");
        // in payload bits: lambda = L*UR*48/(53*N) = 4075.5 b/s = pps * 48 * 8
        assert!((pps * 48.0 * 8.0 - 0.3 * 3e6 * 48.0 / (53.0 * 200.0)).abs() < 1e-6);
    }

    #[test]
    fn mean_gap_is_one_over_rate() {
        let mut rng = Stream::new(3, 9);
        let mut t = SimTime::ZERO;
        let n = 100_000;
        for _ in 0..n {
            t = next_arrival(t, 1000.0, &mut rng);
        }
        let mean = t.as_secs_f64() / n as f64;
        assert!((mean - 1e-3).abs() < 1e-5, "{mean}");
    }
}
