# What one inbound connection costs a node: the resident memory (RSS) of a lab/FloodNode process before and after N
# connections are opened to it and held, silent or having sent one byte (the start of a frame), unbounded
# (max-inbound-connections = unbounded), each stack. Usage: python3 inbound-cost.py TRANSPORT N silent|spoke
import os, socket, subprocess, sys, time
transport, count, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dll = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../lab/FloodNode/bin/Release/net10.0/FloodNode.dll")
node = subprocess.Popen(["bash", "-c", f"ulimit -n 65536; exec dotnet {dll} {transport} 'max-inbound-connections = unbounded' 'connection-timeout = 120s'"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
port = int(node.stdout.readline().split()[1].rsplit(":", 1)[1])
def rss_kib():
    for line in open(f"/proc/{node.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
time.sleep(3)
before = rss_kib()
held = []
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    if mode == "spoke":
        s.send(b"\x00")
    held.append(s)
time.sleep(5)
after = rss_kib()
fds = len(os.listdir(f"/proc/{node.pid}/fd"))
print(f"{transport} {mode}: {count} connections, RSS {before} -> {after} KiB, {(after - before) / count:.1f} KiB each, {fds} descriptors open, alive={node.poll() is None}")
for s in held: s.close()
node.stdin.close(); node.wait(15)
