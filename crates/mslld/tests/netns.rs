//! Acceptance test with real TUN devices: two network namespaces joined by a veth pair, one
//! `mslld` in each, 5 % emulated frame loss each way (the daemons' `[impair]`, no kernel qdisc).
//!
//! ```text
//!  netns A                                              netns B
//!  TCP/UDP client -> msll0 198.19.0.1 [mslld] 198.18.0.1 ==veth== 198.18.0.2 [mslld] msll0 198.19.0.2 -> server
//! ```
//!
//! Phases (each restarts both daemons with another service): TCP bulk through Default, TCP bulk
//! through SR/M2 (>= 3x the Default throughput, byte-exact), UDP CBR through RLP/OOS (< 1 %
//! residual loss), then SIGTERM and restart of one daemon with a TCP transfer after it.
//!
//! Addresses come from 198.18.0.0/15 (RFC 2544, set aside for benchmarking) and exist only inside
//! the namespaces this test creates and deletes. Skipped, with a message, where it cannot run:
//! not root, no /dev/net/tun, no `ip netns`.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mslld");
const KEY: &str = "5a5a5a5a0123456789abcdef0123456789abcdef0123456789abcdef5a5a5a5a";

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn skip_reason() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun missing".into());
    }
    let probe = format!("msllprobe{}", std::process::id());
    if let Err(e) = ip(&["netns", "add", &probe]) {
        return Some(format!("cannot create a network namespace ({e})"));
    }
    // A container may allow namespaces but not TUN devices.
    let tun = ip(&[
        "-n", &probe, "tuntap", "add", "dev", "mslltp", "mode", "tun",
    ]);
    let _ = ip(&["netns", "del", &probe]);
    tun.err()
        .map(|e| format!("cannot create a TUN device ({e})"))
}

/// Namespaces, veth pair, temp dir and daemons; all removed on drop, even after a failure.
struct Lab {
    ns: [String; 2],
    dir: PathBuf,
    daemons: [Option<Child>; 2],
    /// The services the daemons run now, so one can be restarted with the same.
    services: String,
}

impl Lab {
    fn new() -> Result<Lab, String> {
        let id = std::process::id();
        let ns = [format!("msllA{id}"), format!("msllB{id}")];
        let dir = std::env::temp_dir().join(format!("mslld-netns-{id}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let lab = Lab {
            ns: ns.clone(),
            dir,
            daemons: [None, None],
            services: String::new(),
        };
        let (va, vb) = (
            format!("mva{}", id % 100_000),
            format!("mvb{}", id % 100_000),
        );
        ip(&["netns", "add", &ns[0]])?;
        ip(&["netns", "add", &ns[1]])?;
        ip(&[
            "link", "add", &va, "netns", &ns[0], "type", "veth", "peer", "name", &vb, "netns",
            &ns[1],
        ])?;
        for (n, dev, addr) in [
            (&ns[0], &va, "198.18.0.1/30"),
            (&ns[1], &vb, "198.18.0.2/30"),
        ] {
            ip(&["-n", n, "addr", "add", addr, "dev", dev])?;
            ip(&["-n", n, "link", "set", dev, "up"])?;
            ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        Ok(lab)
    }

    fn config(&self, side: usize, services: &str) -> PathBuf {
        let (me, other) = if side == 0 { (1, 2) } else { (2, 1) };
        let text = format!(
            r#"
bind = "198.18.0.{me}:7000"
peer = "198.18.0.{other}:7000"
key = "{KEY}"
control = "{ctl}"
[tun]
name = "msll0"
address = "198.19.0.{me}"
prefix = 24
mtu = 1400
address6 = "fd6d:736c:6c64::{me}"
[link]
rate_mbps = 10
delay_ms = 10
[msll]
services = [{services}]
queue_limit = 256
[impair]
error = {{ model = "bernoulli", p = 0.05 }}
delay_ms = 10
seed = {seed}
"#,
            ctl = self.control(side).display(),
            seed = 100 + side,
        );
        let p = self.dir.join(format!("side{side}.toml"));
        std::fs::write(&p, text).unwrap();
        p
    }

    fn control(&self, side: usize) -> PathBuf {
        self.dir.join(format!("side{side}.sock"))
    }

    fn start(&mut self, side: usize, services: &str) {
        let cfg = self.config(side, services);
        self.services = services.to_string();
        let log = File::create(self.dir.join(format!("side{side}.log"))).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns[side], BIN, "run", "--config"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn mslld");
        self.daemons[side] = Some(child);
    }

    /// SIGTERM one daemon and wait for its clean exit.
    fn stop(&mut self, side: usize) -> std::process::ExitStatus {
        self.stop_with(side, nix::sys::signal::Signal::SIGTERM)
    }

    fn stop_with(
        &mut self,
        side: usize,
        sig: nix::sys::signal::Signal,
    ) -> std::process::ExitStatus {
        let mut c = self.daemons[side].take().expect("running");
        // `ip netns exec` execs the daemon, so this pid is mslld itself.
        let pid = nix::unistd::Pid::from_raw(c.id() as i32);
        let _ = nix::sys::signal::kill(pid, sig);
        let t0 = Instant::now();
        loop {
            if let Some(s) = c.try_wait().unwrap() {
                return s;
            }
            if t0.elapsed() > Duration::from_secs(5) {
                let _ = c.kill();
                return c.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Run the `mslld` CLI against side `side`'s control socket (`args` then `--control PATH`);
    /// its stdout, the command having succeeded.
    fn cli(&self, side: usize, args: &[&str]) -> Vec<u8> {
        let out = Command::new(BIN)
            .args(args)
            .arg("--control")
            .arg(self.control(side))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mslld {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn stats(&self, side: usize) -> Option<serde_json::Value> {
        let s = mslld::control::query(&self.control(side)).ok()?;
        serde_json::from_str(s.trim()).ok()
    }

    /// Both daemons report the link up (each has seen the other's session echoed).
    fn wait_up(&self) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            let up = |s| self.stats(s).is_some_and(|v| v["link_up"] == true);
            if up(0) && up(1) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("link did not come up; logs in {}", self.dir.display());
    }

    fn log(&self, side: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("side{side}.log"))).unwrap_or_default()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for side in 0..2 {
            if self.daemons[side].is_some() {
                self.stop(side);
            }
        }
        for n in &self.ns {
            let _ = ip(&["netns", "del", n]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run `f` on a thread inside namespace `ns` (network namespaces are per thread on Linux).
fn in_ns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let fd = File::open(&path).expect("namespace file");
        nix::sched::setns(fd, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
        f()
    })
}

/// Deterministic byte stream: the sender and the check agree on it without storing it.
struct Pattern(u64);
impl Pattern {
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            let b = self.0.to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
}

fn fnv(h: &mut u64, data: &[u8]) {
    for &b in data {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// The sender's congestion control: Reno unless MSLLD_TEST_TCP_CC names another. The thesis
/// measured TCP Reno; a loss-insensitive controller such as BBR (this machine's default) keeps
/// its rate under random loss whatever the link layer does, which is not what is tested here.
fn tcp_cc() -> String {
    std::env::var("MSLLD_TEST_TCP_CC").unwrap_or_else(|_| "reno".into())
}

fn set_cc(s: &TcpStream) {
    let cc = std::ffi::OsString::from(tcp_cc());
    if let Err(e) = nix::sys::socket::setsockopt(s, nix::sys::socket::sockopt::TcpCongestion, &cc) {
        eprintln!("cannot set TCP congestion control {cc:?}: {e}; using the system default");
    }
}

struct TcpResult {
    bytes: u64,
    mbps: f64,
    exact: bool,
}

/// Bulk TCP from A to B for `dur`: sender hashes what it wrote, receiver what it read.
fn tcp_transfer(lab: &Lab, port: u16, dur: Duration) -> TcpResult {
    let server: SocketAddr = format!("198.19.0.2:{port}").parse().unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let rx = in_ns(&lab.ns[1], move || {
        let l = TcpListener::bind(server).unwrap();
        ready_tx.send(()).unwrap();
        // Bounded wait: if the sender never connects the test fails instead of hanging.
        l.set_nonblocking(true).unwrap();
        let t0 = Instant::now();
        let mut s = loop {
            match l.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(t0.elapsed() < Duration::from_secs(15), "no connection");
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("accept: {e}"),
            }
        };
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = vec![0u8; 65536];
        let (mut n, mut h) = (0u64, 0xcbf2_9ce4_8422_2325u64);
        let mut first = None;
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    first.get_or_insert_with(Instant::now);
                    n += k as u64;
                    fnv(&mut h, &buf[..k]);
                }
                Err(e) => panic!("receiver: {e}"),
            }
        }
        let secs = first.map_or(0.0, |t| t.elapsed().as_secs_f64());
        (n, h, secs)
    });
    ready_rx.recv().unwrap();
    let tx = in_ns(&lab.ns[0], move || {
        let mut s = TcpStream::connect_timeout(&server, Duration::from_secs(10)).unwrap();
        // A small send buffer: the transfer ends soon after the sender stops writing, whatever
        // the throughput, so a slow service cannot stretch the test.
        nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::SndBuf, &(512 * 1024)).unwrap();
        set_cc(&s);
        let mut pat = Pattern(0x9e37_79b9_7f4a_7c15);
        let mut buf = vec![0u8; 16 * 1024];
        let (mut n, mut h) = (0u64, 0xcbf2_9ce4_8422_2325u64);
        let t0 = Instant::now();
        while t0.elapsed() < dur {
            pat.fill(&mut buf);
            s.write_all(&buf).unwrap();
            n += buf.len() as u64;
            fnv(&mut h, &buf);
        }
        s.shutdown(std::net::Shutdown::Write).unwrap();
        (n, h)
    });
    let (sent, hs) = tx.join().unwrap();
    let (got, hr, secs) = rx.join().unwrap();
    TcpResult {
        bytes: got,
        mbps: got as f64 * 8.0 / secs.max(1e-3) / 1e6,
        exact: got == sent && hs == hr,
    }
}

/// Constant-bit-rate UDP from A to B: `n` datagrams of `size` bytes every `gap`; returns the
/// fraction never received.
fn udp_cbr(ns: [String; 2], port: u16, n: u32, size: usize, gap: Duration) -> f64 {
    let server: SocketAddr = format!("198.19.0.2:{port}").parse().unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let rx = in_ns(&ns[1], move || {
        let s = UdpSocket::bind(server).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(1500)))
            .unwrap();
        ready_tx.send(()).unwrap();
        let mut seen = vec![false; n as usize];
        let mut buf = vec![0u8; 2048];
        while let Ok(k) = s.recv(&mut buf) {
            if k >= 4 {
                let i = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
                if i < seen.len() {
                    seen[i] = true;
                }
            }
        }
        seen.iter().filter(|s| **s).count()
    });
    ready_rx.recv().unwrap();
    let tx = in_ns(&ns[0], move || {
        let s = UdpSocket::bind("198.19.0.1:0").unwrap();
        let mut next = Instant::now();
        let mut buf = vec![0x5au8; size];
        for i in 0..n {
            buf[..4].copy_from_slice(&i.to_be_bytes());
            s.send_to(&buf, server).unwrap();
            // Absolute schedule, so sleep overshoot does not lower the rate; but after a long
            // stall of this thread (a loaded test machine) start afresh instead of catching up
            // in a burst, which would test the machine's scheduler rather than the tunnel.
            next += gap;
            let now = Instant::now();
            match next.checked_duration_since(now) {
                Some(d) => std::thread::sleep(d),
                None if now - next > Duration::from_millis(5) => next = now,
                None => {}
            }
        }
    });
    tx.join().unwrap();
    let got = rx.join().unwrap();
    1.0 - got as f64 / n as f64
}

fn service_counters(lab: &Lab, side: usize) -> String {
    lab.stats(side).map_or("-".into(), |v| {
        let c = &v["services"][0]["counters"];
        format!(
            "retx={} naks={} give_ups={} delivered={} impair_lost={} auth_failed={}",
            c["retransmissions"],
            c["naks_sent"],
            c["give_ups"],
            c["packets_delivered"],
            v["counters"]["impair_lost"],
            v["counters"]["auth_failed"]
        )
    })
}

fn run_phase(lab: &mut Lab, services: &str) {
    for side in 0..2 {
        if lab.daemons[side].is_some() {
            // SIGINT here, SIGTERM in the restart below: both must stop the daemon cleanly.
            let st = lab.stop_with(side, nix::sys::signal::Signal::SIGINT);
            assert!(st.success(), "mslld exit {st}: {}", lab.log(side));
        }
    }
    lab.start(0, services);
    lab.start(1, services);
    lab.wait_up();
}

/// Where the environment cannot host the lab the test is skipped with a message, unless
/// `MSLLD_REQUIRE_NETNS=1` says this machine must run it: then a skip is a failure.
fn skip(why: &str) {
    let msg =
        format!("SKIPPED netns_tunnel_acceptance: {why} (needs root, /dev/net/tun and `ip netns`)");
    assert!(
        std::env::var_os("MSLLD_REQUIRE_NETNS").is_none_or(|v| v != "1"),
        "MSLLD_REQUIRE_NETNS=1 but {msg}"
    );
    eprintln!("{msg}");
}

#[test]
fn netns_tunnel_acceptance() {
    if let Some(why) = skip_reason() {
        skip(&why);
        return;
    }
    let t_start = Instant::now();
    let mut lab = match Lab::new() {
        Ok(l) => l,
        Err(e) => {
            // E.g. no veth support: an environment limit, not a daemon fault.
            skip(&format!("namespace setup failed: {e}"));
            return;
        }
    };
    let dur = Duration::from_secs(4);

    run_phase(&mut lab, r#"{ kind = "default" }"#);
    let d = tcp_transfer(&lab, 5001, dur);
    eprintln!(
        "TCP ({}) through default, 5% loss each way: {:.2} Mbit/s ({} bytes) A: {} | B: {}",
        tcp_cc(),
        d.mbps,
        d.bytes,
        service_counters(&lab, 0),
        service_counters(&lab, 1)
    );

    run_phase(&mut lab, r#"{ kind = "sr", nak_policy = "per-frame" }"#);
    // Meanwhile an attacker in A's namespace floods B's UDP port with junk and with datagrams
    // sealed under a wrong key; the transfer must stay byte-exact.
    let attacker = in_ns(&lab.ns[0], move || {
        let s = UdpSocket::bind("198.18.0.1:0").unwrap();
        let forger = mslld::wire::Cipher::new(&mslld::wire::Psk([0x42; 32]));
        let t0 = Instant::now();
        let mut sent = 0u64;
        while t0.elapsed() < Duration::from_secs(3) {
            let mut d = Vec::new();
            forger.seal(
                &mslld::wire::Header {
                    kind: mslld::wire::Kind::Data,
                    session: sent + 1,
                    echo: 0,
                    counter: u64::MAX - sent,
                },
                |o| o.extend_from_slice(&[0x45; 100]),
                &mut d,
            );
            let _ = s.send_to(&d, "198.18.0.2:7000");
            let junk: Vec<u8> = (0..(sent % 97) as u8).collect();
            let _ = s.send_to(&junk, "198.18.0.2:7000");
            sent += 2;
            std::thread::sleep(Duration::from_millis(2));
        }
        sent
    });
    let s = tcp_transfer(&lab, 5002, dur);
    let hostile_sent = attacker.join().unwrap();
    let hostile_seen = lab.stats(1).map_or(0, |v| {
        v["counters"]["auth_failed"].as_u64().unwrap_or(0)
            + v["counters"]["malformed"].as_u64().unwrap_or(0)
    });
    eprintln!("attacker sent {hostile_sent} hostile datagrams, B counted {hostile_seen} (after 5% emulated loss) and dropped them");
    eprintln!(
        "TCP ({}) through sr-m2, 5% loss each way: {:.2} Mbit/s ({} bytes) A: {} | B: {}",
        tcp_cc(),
        s.mbps,
        s.bytes,
        service_counters(&lab, 0),
        service_counters(&lab, 1)
    );

    run_phase(
        &mut lab,
        r#"{ kind = "rlp", delivery = "out-of-sequence", max_naks = 1 }"#,
    );
    let loss = udp_cbr(lab.ns.clone(), 5003, 4000, 200, Duration::from_micros(500));
    eprintln!(
        "UDP CBR 3.2 Mbit/s through rlp-oos, 5% loss each way: residual loss {:.3}% A: {} | B: {}",
        loss * 100.0,
        service_counters(&lab, 0),
        service_counters(&lab, 1)
    );

    // Multi-service: the heuristic classifier sends TCP to SR/M2 and UDP to RLP/OOS, sharing
    // the link by SCFQ; both flows at once.
    run_phase(
        &mut lab,
        r#"{ kind = "default" }, { kind = "sr", nak_policy = "per-frame" },
            { kind = "rlp", delivery = "out-of-sequence", max_naks = 1 }]
classifier = { kind = "heuristic", rules = [{ protocol = 6, service = 1 }, { protocol = 17, service = 2 }] }
rates = [1, 1, 2"#,
    );
    let ns = lab.ns.clone();
    let udp = std::thread::spawn(move || udp_cbr(ns, 5006, 4000, 200, Duration::from_micros(500)));
    let m = tcp_transfer(&lab, 5005, dur);
    // The CLI's view of the same counters.
    let cli: serde_json::Value =
        serde_json::from_slice(&lab.cli(0, &["stats"])).expect("stats prints JSON");
    assert_eq!(cli["services"][1]["scheme"], "sr-m2");
    // The same counters as Prometheus exposition text.
    let prom = String::from_utf8(lab.cli(0, &["stats", "--format", "prometheus"])).unwrap();
    assert!(
        prom.lines()
            .any(|l| l.starts_with("mslld_service_retransmissions_total{")
                && l.contains("index=\"1\",scheme=\"sr-m2\"} ")),
        "{prom}"
    );
    assert!(prom.contains("# TYPE mslld_datagrams_out_total counter\nmslld_datagrams_out_total "));
    // Live rate change through the CLI: shares 1:1:2 become 1:2:2.
    lab.cli(0, &["rate", "--service", "1", "--rate", "2"]);
    let share = lab.stats(0).unwrap()["services"][1]["share"]
        .as_f64()
        .unwrap();
    assert!((share - 0.4).abs() < 1e-9, "share {share}");
    let m_loss = udp.join().unwrap();
    let per_service: Vec<u64> = lab.stats(1).map_or(vec![], |v| {
        (0..3)
            .map(|i| {
                v["services"][i]["counters"]["packets_delivered"]
                    .as_u64()
                    .unwrap_or(0)
            })
            .collect()
    });
    // Where UDP packets went missing, if any: A's ingress drops and RLP give-ups.
    let a_udp = lab.stats(0).map_or("-".into(), |v| {
        let sv = &v["services"][2];
        format!(
            "ingress_dropped={} give_ups={} queue_dropped={} ingress_delay_ms_max={}",
            sv["ingress_dropped"],
            sv["counters"]["give_ups"],
            sv["queue_dropped"],
            sv["ingress_delay_ms_max"]
        )
    });
    eprintln!(
        "multi-service (tcp->sr-m2, udp->rlp-oos, scfq): TCP {:.2} Mbit/s, UDP residual loss {:.3}%, delivered per service at B {per_service:?}; A udp service: {a_udp}",
        m.mbps,
        m_loss * 100.0
    );

    // Restart B alone (SIGTERM: clean exit, control socket removed); A must not wedge.
    let st = lab.stop(1);
    assert!(st.success(), "mslld exit {st}: {}", lab.log(1));
    assert!(!lab.control(1).exists(), "control socket left behind");
    assert!(
        ip(&["-n", &lab.ns[1], "link", "show", "msll0"]).is_err(),
        "TUN device left behind"
    );
    let services = lab.services.clone();
    lab.start(1, &services);
    lab.wait_up();
    let r = tcp_transfer(&lab, 5004, Duration::from_secs(1));
    let restarts = lab.stats(0).map(|v| v["counters"]["peer_restarts"].clone());
    eprintln!(
        "after restarting B: TCP {:.2} Mbit/s, A saw peer_restarts = {restarts:?}",
        r.mbps
    );
    eprintln!("netns test took {:.1} s", t_start.elapsed().as_secs_f64());

    assert!(d.exact, "default: TCP data differs");
    assert!(s.exact, "sr-m2: TCP data differs");
    assert!(
        hostile_seen as f64 > 0.85 * hostile_sent as f64,
        "hostile datagrams not all counted: {hostile_seen} of {hostile_sent}"
    );
    assert!(r.exact && r.bytes > 0, "after restart: TCP data differs");
    if tcp_cc() == "bbr" {
        // BBR does not slow down on random loss, so end-to-end recovery already keeps its rate;
        // the comparison is reported above but not asserted.
        eprintln!("MSLLD_TEST_TCP_CC=bbr: throughput ratio not asserted");
    } else {
        assert!(
            s.mbps >= 3.0 * d.mbps,
            "sr-m2 {:.2} Mbit/s is not 3x default {:.2} Mbit/s",
            s.mbps,
            d.mbps
        );
    }

    assert!(loss < 0.01, "rlp-oos residual loss {:.3}%", loss * 100.0);
    assert!(m.exact, "multi-service: TCP data differs");
    assert!(
        m_loss < 0.01,
        "multi-service: UDP residual loss {:.3}%",
        m_loss * 100.0
    );
    assert!(
        per_service.len() == 3 && per_service[1] > 1000 && per_service[2] > 3900,
        "classifier did not split TCP and UDP: {per_service:?}"
    );
    assert_eq!(restarts, Some(serde_json::json!(1)));
}
