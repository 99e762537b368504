//! Which machine measured a figure: its processor, logical cores and platform.
//!
//! Timings only compare on one machine: sessions 13-19 measured the same code 15-75 % apart on
//! two VM types, and one of them drifted by 6 % within an hour (docs/performance.md). So
//! `msll bench --out` records the machine beside its figures, `--baseline` says when the baseline
//! came from another one, and the reproduction report names the machine its wall time is from.

/// A machine, as far as timings depend on it.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// The processor's model name (`/proc/cpuinfo` on Linux), or `"unknown"`.
    pub cpu: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// `os-arch`, e.g. `linux-x86_64`.
    pub platform: String,
}

impl Machine {
    /// The machine this process runs on.
    pub fn this() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model(&t))
            .unwrap_or_else(|| "unknown".to_string());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            platform: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }

    /// Whether timings of `self` and `other` can be compared: same processor model, core count
    /// and platform. A record without a machine (written before it was recorded) is not known
    /// to match.
    pub fn same_as(&self, other: &Machine) -> bool {
        self == other && !self.cpu.is_empty()
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cpu.is_empty() {
            return write!(f, "an unrecorded machine");
        }
        write!(f, "{}, {} cores, {}", self.cpu, self.cores, self.platform)
    }
}

/// The first `model name` of a `/proc/cpuinfo` text (x86), else its `Processor`, `cpu model` or
/// `uarch` line (Arm, MIPS, RISC-V kernels name it differently), whitespace collapsed.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Processor", "cpu model", "uarch"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty())
                .then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_model_name_of_x86_and_arm_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 207\n\
                   model name\t: Intel(R) Xeon(R)   Processor\nflags\t: fpu\n\n\
                   processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n";
        assert_eq!(
            cpu_model(x86).as_deref(),
            Some("Intel(R) Xeon(R) Processor")
        );
        let arm =
            "processor\t: 0\nBogoMIPS\t: 48.00\nCPU part\t: 0xd0c\n\nuarch\t\t: neoverse-n1\n";
        assert_eq!(cpu_model(arm).as_deref(), Some("neoverse-n1"));
        assert_eq!(cpu_model("processor\t: 0\nmodel name\t:   \n"), None);
        assert_eq!(cpu_model(""), None);
    }

    #[test]
    fn machines_compare_by_cpu_cores_and_platform() {
        let m = Machine {
            cpu: "X".into(),
            cores: 2,
            platform: "linux-x86_64".into(),
        };
        assert!(m.same_as(&m.clone()));
        assert!(!m.same_as(&Machine {
            cores: 4,
            ..m.clone()
        }));
        assert!(!m.same_as(&Machine {
            cpu: "Y".into(),
            ..m.clone()
        }));
        // A baseline from before machines were recorded deserialises to the default: unknown.
        assert!(!Machine::default().same_as(&Machine::default()));
        assert_eq!(Machine::default().to_string(), "an unrecorded machine");
        assert_eq!(m.to_string(), "X, 2 cores, linux-x86_64");
        let this = Machine::this();
        assert!(this.cores >= 1 && !this.cpu.is_empty() && !this.platform.is_empty());
    }
}
