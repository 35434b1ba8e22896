//! AIMD (placeholder: being written).
use super::AckEvent;
use crate::time::Time;
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AimdParams {}
#[derive(Debug, Clone)]
pub struct Aimd {
    window: u32,
}
impl Aimd {
    pub fn new(_p: AimdParams, initial_window: u32) -> Self {
        Aimd {
            window: initial_window,
        }
    }
    pub fn window(&self) -> u32 {
        self.window
    }
    pub fn on_ack(&mut self, _now: Time, _ack: &AckEvent) {}
    pub fn on_loss(&mut self, _now: Time, _una: u64, _nxt: u64) {}
}
