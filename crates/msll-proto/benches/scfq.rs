//! SCFQ per-frame cost against the number of services (seed 004 sec. 6.2.3: at most 2 lg(n) heap
//! comparisons per frame, O(1) stamping). A printout, not a timed test:
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-msll cargo bench -p msll-proto --bench scfq
//! ```
//!
//! Every service is kept backlogged (the worst case: a full heap); each step dequeues one frame
//! and queues a replacement for the same service.

use std::hint::black_box;
use std::time::Instant as Wall;

use msll_proto::scheduler::{Discipline, Scheduler};
use msll_proto::Buf;
use msll_proto::{Frame, Instant};

fn main() {
    let frames = 2_000_000u64;
    println!("services  ns/frame  comparisons/frame  2*lg(n)");
    for n in [2usize, 4, 8, 16, 32, 64] {
        let rates: Vec<f64> = (1..=n).map(|i| 1.0 + (i % 5) as f64).collect();
        let mut s = Scheduler::new(Discipline::Scfq, &rates, None);
        let body = Buf::from(vec![0u8; 99]);
        let f = |i: usize| Frame::new(&[0], body.slice(..50 + i % 40));
        for i in 0..n {
            let _ = s.enqueue(Instant::ZERO, i, f(i));
            let _ = s.enqueue(Instant::ZERO, i, f(i));
        }
        let c0 = s.comparisons();
        let t = Wall::now();
        for _ in 0..frames {
            let (i, fr) = s.dequeue(Instant::ZERO).expect("backlogged");
            black_box(&fr);
            let _ = s.enqueue(Instant::ZERO, i, f(i));
        }
        let ns = t.elapsed().as_nanos() as f64 / frames as f64;
        let cmp = (s.comparisons() - c0) as f64 / frames as f64;
        println!(
            "{n:>8}  {ns:>8.1}  {cmp:>17.2}  {:>7.1}",
            2.0 * (n as f64).log2()
        );
    }
}
