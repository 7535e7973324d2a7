//! The congestion controller a sender holds: static dispatch over the controllers that implement
//! the hook (`cc.rs`: Reno; `cubic.rs`: CUBIC), so neither knows the other.

use super::cc::{AckInfo, CongestionControl, LossInfo, Reno};
use super::cubic::Cubic;

/// The hook a sender holds: static dispatch over the controllers.
#[derive(Clone, Debug)]
pub enum Controller {
    Reno(Reno),
    Cubic(Cubic),
}

impl CongestionControl for Controller {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.on_ack(a),
            Controller::Cubic(c) => c.on_ack(a),
        }
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.ssthresh_on_loss(l),
            Controller::Cubic(c) => c.ssthresh_on_loss(l),
        }
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        match self {
            Controller::Reno(r) => r.ssthresh_on_timeout(l),
            Controller::Cubic(c) => c.ssthresh_on_timeout(l),
        }
    }
}
