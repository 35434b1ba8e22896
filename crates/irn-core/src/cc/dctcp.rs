//! DCTCP (placeholder: being written).
use super::AckEvent;
use crate::time::Time;
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DctcpParams {}
#[derive(Debug, Clone)]
pub struct Dctcp {
    window: u32,
}
impl Dctcp {
    pub fn new(_p: DctcpParams, initial_window: u32) -> Self {
        Dctcp {
            window: initial_window,
        }
    }
    pub fn window(&self) -> u32 {
        self.window
    }
    pub fn on_ack(&mut self, _now: Time, _ack: &AckEvent) {}
    pub fn on_loss(&mut self, _now: Time, _una: u64, _nxt: u64) {}
}
