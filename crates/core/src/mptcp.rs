//! (landing)
