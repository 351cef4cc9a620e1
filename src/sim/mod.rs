//! The simulated phone: the device side of the ADB transport over TCP (placeholder, filled in by
//! the simulator work).
