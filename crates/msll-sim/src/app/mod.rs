//! Applications and transport agents attached to nodes. Each is sans-IO in the same way as the
//! link-layer schemes: `handle_packet` / `handle_timeout` take `now` and push packets into `out`,
//! `poll_timeout` tells the engine when to call again.

pub mod conference;
pub mod http_dist;
pub mod video;
pub mod www;

pub use conference::{OnOffSource, UdpSink};
