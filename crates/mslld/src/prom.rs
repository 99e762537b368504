//! The stats snapshot in Prometheus' text exposition format (`mslld stats --format prometheus`).
//!
//! Network engineers watch a tunnel with the monitoring they already run; kcptun's SNMP counters
//! and UDPspeeder's `--report` are what peers offer (peers.md sec. 5.1 asks for "JSON/Prometheus
//! text"). The daemon answers its control socket in JSON (`control.rs`); this module turns that
//! reply into exposition text, so `mslld stats --format prometheus > DIR/mslld.prom` feeds
//! node_exporter's textfile collector with no HTTP server in the daemon.
//!
//! Mapping (every number of the JSON appears once; strings become labels):
//! - a field inside a `counters` object is a counter, `mslld_<field>_total` (daemon counters)
//!   or `mslld_service_<field>_total` (a service's scheme counters);
//! - the other cumulative fields ([`CUMULATIVE`]) are counters too; every other number is a gauge,
//!   `mslld_<field>` or `mslld_service_<field>`, nested objects joined with `_`
//!   (`mslld_service_metrics_goodput`); booleans are 0/1;
//! - per-service samples carry `service="<name>"`, `index="<i>"` and `scheme="<scheme>"`;
//! - `session` and `peer_session` label an `mslld_info` gauge of value 1;
//! - a null (a metric not measured yet) is left out.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// Fields outside a `counters` object that only grow since the daemon started (the Endpoint's
/// own are summed over the Endpoints peer restarts replaced, since session 47): exposed as
/// counters.
pub const CUMULATIVE: &[&str] = &[
    "endpoint_frames_transmitted",
    "endpoint_frames_received",
    "endpoint_unknown_service",
    "endpoint_queue_drops",
    "ingress_dropped",
    "ingress_expired",
    "queue_dropped",
];

#[derive(Default)]
struct Family {
    counter: bool,
    samples: Vec<(String, f64)>,
}

/// `snapshot` (the daemon's `stats` reply) as exposition text, metric families in name order.
pub fn exposition(snapshot: &Value) -> anyhow::Result<String> {
    let obj = snapshot
        .as_object()
        .ok_or_else(|| anyhow::anyhow!("stats reply is not a JSON object"))?;
    let mut fam: BTreeMap<String, Family> = BTreeMap::new();
    let mut info = Vec::new();
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("session" | "peer_session", Value::String(s)) => info.push((k.clone(), s.clone())),
            ("services", Value::Array(list)) => {
                for (i, s) in list.iter().enumerate() {
                    let labels = service_labels(i, s);
                    if let Some(so) = s.as_object() {
                        for (sk, sv) in so {
                            if sk != "name" && sk != "scheme" {
                                walk(&mut fam, "mslld_service", sk, sv, false, &labels);
                            }
                        }
                    }
                }
            }
            _ => walk(&mut fam, "mslld", k, v, false, ""),
        }
    }
    let mut out = String::new();
    if !info.is_empty() {
        let labels: Vec<String> = info
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        let _ = writeln!(out, "# HELP mslld_info The tunnel's session identifiers.");
        let _ = writeln!(out, "# TYPE mslld_info gauge");
        let _ = writeln!(out, "mslld_info{{{}}} 1", labels.join(","));
    }
    for (name, f) in &fam {
        let kind = if f.counter { "counter" } else { "gauge" };
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (labels, v) in &f.samples {
            let _ = writeln!(out, "{name}{labels} {}", number(*v));
        }
    }
    Ok(out)
}

fn service_labels(i: usize, s: &Value) -> String {
    let text = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("");
    format!(
        "{{service=\"{}\",index=\"{i}\",scheme=\"{}\"}}",
        escape(text("name")),
        escape(text("scheme"))
    )
}

fn walk(
    fam: &mut BTreeMap<String, Family>,
    prefix: &str,
    key: &str,
    v: &Value,
    in_counters: bool,
    labels: &str,
) {
    let (name, counter) = if in_counters {
        (format!("{prefix}_{}_total", sanitize(key)), true)
    } else {
        (
            format!("{prefix}_{}", sanitize(key)),
            CUMULATIVE.contains(&key),
        )
    };
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Object(o) => {
            // `counters` holds counters; any other object is a group of gauges (or, inside
            // `counters`, of counters named after it, `_total` only at the end).
            let (p, c) = if key == "counters" {
                (prefix.to_string(), true)
            } else {
                (format!("{prefix}_{}", sanitize(key)), in_counters)
            };
            for (k, v) in o {
                walk(fam, &p, k, v, c, labels);
            }
            return;
        }
        // Null (not measured yet), strings (names) and arrays carry no sample.
        _ => None,
    };
    if let Some(x) = x {
        let f = fam.entry(if counter && !in_counters {
            format!("{name}_total")
        } else {
            name
        });
        let f = f.or_default();
        f.counter = counter;
        f.samples.push((labels.to_string(), x));
    }
}

/// A metric name part: `[a-zA-Z0-9_]`, anything else becomes `_`.
fn sanitize(k: &str) -> String {
    k.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A label value: backslash, double quote and newline escaped (exposition format).
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counters_gauges_labels_and_nulls() {
        let snap = json!({
            "session": "00ab",
            "peer_session": null,
            "link_up": true,
            "now_s": 12.5,
            "counters": { "ip_in": 7, "auth_failed": 0, "by_kind": { "hello": 2 } },
            "endpoint_queue_drops": 3,
            "backlog_frames": 2,
            "services": [
                { "name": "tcp \"bulk\"", "scheme": "sr-m2", "queue_len": 4, "queue_dropped": 1,
                  "counters": { "retransmissions": 9 },
                  "metrics": { "goodput": 0.9, "loss": null } },
                { "name": "rt", "scheme": "rlp-oos", "queue_len": 0, "queue_dropped": 0,
                  "counters": { "retransmissions": 1 }, "metrics": null }
            ]
        });
        let t = exposition(&snap).unwrap();
        let has = |line: &str| assert!(t.lines().any(|l| l == line), "no `{line}` in\n{t}");
        has("mslld_info{session=\"00ab\"} 1");
        has("# TYPE mslld_link_up gauge");
        has("mslld_link_up 1");
        has("mslld_now_s 12.5");
        has("# TYPE mslld_ip_in_total counter");
        has("mslld_ip_in_total 7");
        has("mslld_auth_failed_total 0");
        has("mslld_by_kind_hello_total 2");
        has("# TYPE mslld_endpoint_queue_drops_total counter");
        has("mslld_endpoint_queue_drops_total 3");
        has("# TYPE mslld_backlog_frames gauge");
        let l0 = "{service=\"tcp \\\"bulk\\\"\",index=\"0\",scheme=\"sr-m2\"}";
        let l1 = "{service=\"rt\",index=\"1\",scheme=\"rlp-oos\"}";
        has(&format!("mslld_service_queue_len{l0} 4"));
        has(&format!("mslld_service_queue_dropped_total{l1} 0"));
        has("# TYPE mslld_service_retransmissions_total counter");
        has(&format!("mslld_service_retransmissions_total{l0} 9"));
        has(&format!("mslld_service_retransmissions_total{l1} 1"));
        has(&format!("mslld_service_metrics_goodput{l0} 0.9"));
        // Nulls are left out; each family has one TYPE line, before its samples.
        assert!(!t.contains("metrics_loss"), "{t}");
        let types: Vec<&str> = t.lines().filter(|l| l.starts_with("# TYPE ")).collect();
        let mut names: Vec<&str> = types.iter().map(|l| l.split(' ').nth(2).unwrap()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a family typed twice:\n{t}");
        let mut current = "";
        for l in t.lines() {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                current = rest.split(' ').next().unwrap();
            } else if !l.starts_with('#') {
                let name = l.split(['{', ' ']).next().unwrap();
                assert_eq!(name, current, "sample outside its family: {l}");
            }
        }
    }

    #[test]
    fn not_an_object_is_an_error() {
        assert!(exposition(&json!([1, 2])).is_err());
    }
}
