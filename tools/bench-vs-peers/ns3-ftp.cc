// ns-3 equivalent of msll bench case (a), written for this repository (issue 8):
//   n0 --10Mb/1ms-- n1 --2Mb/3ms-- n2, 100 MB bulk TCP transfer n0 -> n2, 1000-byte segments,
//   byte errors at rate 1/32768 (exponential byte intervals, seed 004 WLAN level 3) in both
//   directions of the last hop. TCP: ns-3's TcpLinuxReno (closest to Reno), no delayed ACK.
#include <cstring>  // Debian 3.37 headers use memcmp without including it
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

using namespace ns3;

int main(int argc, char* argv[]) {
    uint64_t bytes = 100000000;
    CommandLine cmd;
    cmd.AddValue("bytes", "bytes to transfer", bytes);
    cmd.Parse(argc, argv);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpLinuxReno"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    NodeContainer n;
    n.Create(3);
    PointToPointHelper lan, wlan;
    lan.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    lan.SetChannelAttribute("Delay", StringValue("1ms"));
    wlan.SetDeviceAttribute("DataRate", StringValue("2Mbps"));
    wlan.SetChannelAttribute("Delay", StringValue("3ms"));
    NetDeviceContainer d01 = lan.Install(n.Get(0), n.Get(1));
    NetDeviceContainer d12 = wlan.Install(n.Get(1), n.Get(2));
    for (uint32_t i = 0; i < 2; i++) {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_BYTE"));
        em->SetAttribute("ErrorRate", DoubleValue(1.0 / 32768));
        d12.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }
    InternetStackHelper stack;
    stack.Install(n);
    Ipv4AddressHelper a;
    a.SetBase("10.0.1.0", "255.255.255.0");
    a.Assign(d01);
    a.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer i12 = a.Assign(d12);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    uint16_t port = 9;
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(i12.GetAddress(1), port));
    src.SetAttribute("MaxBytes", UintegerValue(bytes));
    src.SetAttribute("SendSize", UintegerValue(1000));
    src.Install(n.Get(0)).Start(Seconds(0.0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer s = sink.Install(n.Get(2));
    s.Start(Seconds(0.0));
    Simulator::Stop(Seconds(100000));
    Ptr<PacketSink> ps = DynamicCast<PacketSink>(s.Get(0));
    // Stop as soon as everything has arrived: poll once per simulated second.
    std::function<void()> check = [&]() {
        if (ps->GetTotalRx() >= bytes) {
            std::cout << "done " << Simulator::Now().GetSeconds() << " rx " << ps->GetTotalRx() << std::endl;
            Simulator::Stop();
        } else {
            Simulator::Schedule(Seconds(1.0), check);
        }
    };
    Simulator::Schedule(Seconds(1.0), check);
    Simulator::Run();
    Simulator::Destroy();
    return 0;
}
