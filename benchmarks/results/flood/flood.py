import subprocess, sys, time, socket, re, os, threading
transport = sys.argv[1]; hold = float(sys.argv[2]) if len(sys.argv) > 2 else 10
dll = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../lab/FloodNode/bin/Release/net10.0/FloodNode.dll")
env = dict(os.environ)
node = subprocess.Popen(["bash", "-c", f"ulimit -n 256; exec dotnet {dll} {transport}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
line = node.stdout.readline().strip()
addr = line.split()[1]
port = int(addr.rsplit(":", 1)[1])
asker = subprocess.Popen(["dotnet", dll, "ask", addr], stdout=subprocess.PIPE, text=True)
asks = []
def read_asks():
    for l in asker.stdout:
        asks.append((time.time(), l.strip()))
threading.Thread(target=read_asks, daemon=True).start()
def cpu_seconds():
    # utime and stime of the node's whole process (all threads), in clock ticks: /proc/PID/stat fields 14 and 15.
    fields = open(f"/proc/{node.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
time.sleep(3)
t0 = time.time()
cpu0 = cpu_seconds()
socks = []
for i in range(400):
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    socks.append(s)
fdcount = []
while time.time() - t0 < hold:
    try: fdcount.append(len(os.listdir(f"/proc/{node.pid}/fd")))
    except Exception: fdcount.append(-1)
    time.sleep(0.5)
cpu_flooded = (cpu_seconds() - cpu0) / (time.time() - t0)
for s in socks: s.close()
t1 = time.time()
time.sleep(8)
alive = node.poll() is None
# accepts again?
ok_after = False
try:
    c = socket.create_connection(("127.0.0.1", port), timeout=2); ok_after = True; c.close()
except Exception as e: pass
lost = [a for a in asks if "lost" in a[1]]
slow = [a for a in asks if a[1].startswith("ASK ok") and int(a[1].split()[2]) > 1000]
print(f"{transport}: alive={alive} rc={node.poll()} asks={len(asks)} lost={len(lost)} slow={len(slow)} max_fds={max(fdcount)} accept_after={ok_after} cpu_flooded={cpu_flooded:.2f}")
if lost: print("  lost at", [round(a[0]-t0,1) for a in lost][:10])
if not alive:
    print("  stderr:", node.stderr.read()[-2000:])
asker.kill()
try:
    node.stdin.close(); node.wait(10)
except Exception: node.kill()
