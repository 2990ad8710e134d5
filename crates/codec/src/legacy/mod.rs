//! The profile formats from before protobuf that `go tool pprof` still
//! reads, each into the pprof model as Go's `profile` package reads it:
//!
//! - [`cpu`]: gperftools CPU profiles (binary);
//! - [`heap`]: heap profiles in text (gperftools' heapz and growthz, Go's
//!   `debug=1` heap dump);
//! - [`contention`]: contention profiles (`--- contentionz`, Go's mutex and
//!   block profiles);
//! - [`thread`]: thread profiles (`--- threadz`);
//! - [`count`]: Go's `debug=1` count profiles (goroutine, threadcreate);
//! - [`java`]: Java's CPU, heap and contention profiles;
//! - `maps`: the memory maps they end with, shared by all.

pub mod contention;
pub mod count;
pub mod cpu;
pub mod heap;
pub mod java;
pub(crate) mod maps;
pub mod thread;
