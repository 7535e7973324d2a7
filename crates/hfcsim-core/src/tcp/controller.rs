//! The congestion controller a sender holds: static dispatch over the controllers that implement
//! the hook (`cc.rs`: Reno; `cubic.rs`: CUBIC; `dctcp.rs`: DCTCP; `prague.rs`: TCP Prague; `bbr.rs`: BBR,
//! which sets cwnd itself on every ACK: `Controller::bbr`), so none
//! knows the others.

use super::bbr::Bbr;
use super::cc::{AckInfo, CongestionControl, Feedback, LossInfo, Reno};
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::pacing::PacingInput;
use super::prague::Prague;

/// The hook a sender holds: static dispatch over the controllers.
#[derive(Clone, Debug)]
pub enum Controller {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    Prague(Prague),
    /// Boxed: its state is several times the others'.
    Bbr(Box<Bbr>),
}

impl Controller {
    /// BBR, Linux's one `cong_control` here: it sets cwnd and the pacing rate on every ACK, and
    /// neither PRR nor the end of recovery sets cwnd for it (`tcp_cong_control`,
    /// `tcp_end_cwnd_reduction`).
    pub fn bbr(&mut self) -> Option<&mut Bbr> {
        match self {
            Controller::Bbr(b) => Some(b.as_mut()),
            _ => None,
        }
    }

    pub fn is_bbr(&self) -> bool {
        matches!(self, Controller::Bbr(_))
    }
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Controller::Reno($c) => $e,
            Controller::Cubic($c) => $e,
            Controller::Dctcp($c) => $e,
            Controller::Prague($c) => $e,
            Controller::Bbr($c) => $e,
        }
    };
}

impl CongestionControl for Controller {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        each!(self, c => c.on_ack(a))
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        each!(self, c => c.ssthresh_on_loss(l))
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        each!(self, c => c.ssthresh_on_timeout(l))
    }

    fn ssthresh_on_ecn(&mut self, l: &LossInfo) -> u64 {
        each!(self, c => c.ssthresh_on_ecn(l))
    }

    fn on_ecn_feedback(&mut self, f: &Feedback) {
        each!(self, c => c.on_ecn_feedback(f))
    }

    fn pacing_rate(&self, p: &PacingInput) -> Option<u64> {
        each!(self, c => c.pacing_rate(p))
    }

    fn grows_while_reducing(&self) -> bool {
        each!(self, c => c.grows_while_reducing())
    }
}
