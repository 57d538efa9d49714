#!/usr/bin/env python3
"""What moving bytes through loopback TCP costs the kernel alone on this machine: one sender and one receiver in one
process, no framing, no copies of their own, the receiver always ready. Prints CPU per MiB (user and system time of
the process) and MiB/s, once per run. docs/performance.md compares it with the transports' CPU per large message: no
transport over sockets can spend less than this per byte it carries.

    python3 benchmarks/loopback-floor.py [--mib 1024] [--runs 3]
"""
import argparse
import resource
import socket
import threading
import time

MIB = 1 << 20


def run(total_mib):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def receive():
        connection, _ = listener.accept()
        view = memoryview(bytearray(MIB))
        received = 0
        while received < total_mib * MIB:
            n = connection.recv_into(view)
            if n == 0:
                break
            received += n
        connection.close()

    receiver = threading.Thread(target=receive)
    receiver.start()
    sender = socket.create_connection(listener.getsockname())
    data = bytes(MIB)
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    for _ in range(total_mib):
        sender.sendall(data)
    sender.close()
    receiver.join()
    after, elapsed = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - started
    listener.close()
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    print(f"{total_mib} MiB in {elapsed:.2f} s: {(user + system) * 1000 / total_mib:.3f} ms CPU per MiB "
          f"(user {user:.2f} s, system {system:.2f} s), {total_mib / elapsed:,.0f} MiB/s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="MiB to send per run, in 1 MiB writes")
    parser.add_argument("--runs", type=int, default=3, help="runs, one line each")
    arguments = parser.parse_args()
    for _ in range(arguments.runs):
        run(arguments.mib)
