# The two TCP profiles of the cross-check scripts (sourced by chain.tcl, ftp.tcl, www.tcl).
# Written for this repository.
#
#   2.35  : stock ns-2.35 defaults
#   2.1b4 : ns-2.35 configured to behave like ns-2.1b4 as far as it can be (ns2-semantics.md
#           sec. 9/10): IW 1, no SYN, no headers, no Limited Transmit, integer halving, repeated
#           FR flag, timer restart before the RTT update, RTO init 6 s, no RTO floor. ns-2.35 still
#           marks Fast Recovery exited on every new ACK, and its `reset` stays 2.35's.
proc tcp_profile {profile} {
    if {$profile == "2.1b4"} {
        Agent/TCP set windowInit_ 1
        Agent/TCP set syn_ false
        Agent/TCP set delay_growth_ false
        Agent/TCP set useHeaders_ false
        Agent/TCP set singledup_ 0
        Agent/TCP set precisionReduce_ false
        Agent/TCP set exitFastRetrans_ false
        Agent/TCP set timerfix_ false
        Agent/TCP set bugfix_ss_ 0
        Agent/TCP set rfc2988_ false
        Agent/TCP set minrto_ 0
        Agent/TCP set maxrto_ 100000
        Agent/TCP set rtxcur_init_ 6.0
        # 2.1b4's DelAck had neither exception (ns2-semantics.md 2).
        Agent/TCPSink set RFC2581_immediate_ack_ false
        Agent/TCPSink set SYN_immediate_ack_ false
    } elseif {$profile != "2.35"} {
        puts stderr "unknown profile $profile"
        exit 1
    }
}
