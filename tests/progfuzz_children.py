"""Child processes for tests/test_progfuzz.py's checks of tools/progfuzz/hang.py (a module of its
own, so a spawned child imports only this)."""
import time


def finishes(conn, value):
    conn.send(value)


def sleeps(conn, seconds):
    time.sleep(seconds)
    conn.send("late")
