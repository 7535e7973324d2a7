//! The congestion controller a sender holds: static dispatch over the controllers that implement
//! the hook (`cc.rs`: Reno; `cubic.rs`: CUBIC; `dctcp.rs`: DCTCP), so none knows the others.

use super::cc::{AckInfo, CongestionControl, LossInfo, Reno};
use super::cubic::Cubic;
use super::dctcp::Dctcp;

/// The hook a sender holds: static dispatch over the controllers.
#[derive(Clone, Debug)]
pub enum Controller {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
}

impl CongestionControl for Controller {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.on_ack(a),
            Controller::Cubic(c) => c.on_ack(a),
            Controller::Dctcp(d) => d.on_ack(a),
        }
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.ssthresh_on_loss(l),
            Controller::Cubic(c) => c.ssthresh_on_loss(l),
            Controller::Dctcp(d) => d.ssthresh_on_loss(l),
        }
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.ssthresh_on_timeout(l),
            Controller::Cubic(c) => c.ssthresh_on_timeout(l),
            Controller::Dctcp(d) => d.ssthresh_on_timeout(l),
        }
    }

    fn ssthresh_on_ecn(&mut self, l: &LossInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.ssthresh_on_ecn(l),
            Controller::Cubic(c) => c.ssthresh_on_ecn(l),
            Controller::Dctcp(d) => d.ssthresh_on_ecn(l),
        }
    }

    fn on_ecn_feedback(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        if let Controller::Dctcp(d) = self {
            d.on_ecn_feedback(acked, ece, snd_una, snd_nxt);
        }
    }
}
