# SPDX-License-Identifier: BSD-2-Clause
# fuzz/objcache_seeds.py - the hand-written seeds of fuzz_objcache_mt
# (fuzz/corpus/objcache_mt/, named; see docs/fuzzing.md).
#
#   python3 fuzz/objcache_seeds.py fuzz/corpus
#
# Input layout (fuzz/objcache_mt_fuzz.c): byte 0 the threads (2 + b % 3) and
# the policy ((b >> 2) % 8: 0-4 bytes, 5-6 PCT, 7 free running); byte 1
# unused (the allocation to fail, not injected); byte 2 the configuration
# (bits 0-1 the design: 0 A, 1 A with reparent, 2 B with a 1-slot stock, 3 B
# with 5; bits 2-3 the magazine: 1, 2, 8, 32 objects; bits 4-5 the size: 16,
# 40, 64, 200 bytes); then per thread a length (b % 17) and that many
# (op, arg) pairs; the rest is the schedule, one byte per decision (b % the
# threads that can run). Without schedule bytes each thread runs its whole
# script, in thread order.
import os, sys

# op numbers (op() in objcache_mt_fuzz.c)
ALLOC_ROOT, ALLOC_GROUP, ALLOC_HELD, FREE, GIVE, TAKE, CREATE, OFFLINE, PUT_HELD, WALK, SHRINK, FOREIGN = \
    0, 1, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14
A, A_REPARENT, B1, B5 = 0, 1, 2, 3


def cfg(design, magazine=3, size=2):
    return design | magazine << 2 | size << 4


def seed(d, name, design, scripts, schedule=b'', policy=0, magazine=3):
    b = bytearray([(len(scripts) - 2) | policy << 2, 0, cfg(design, magazine)])
    for s in scripts:
        assert len(s) <= 16, name
        b.append(len(s))
        for op, arg in s:
            b += bytes([op, arg])
    b += bytes(schedule)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(bytes(b))


def main(root):
    d = os.path.join(root, 'objcache_mt')
    os.makedirs(d, exist_ok=True)
    # A group's objects handed to another thread, which frees them after the
    # group's offline (the dead child's last free destroys it), with and
    # without reparent, magazines on and off; the callbacks run at offline.
    t0 = [(CREATE, 0), (ALLOC_GROUP, 0), (ALLOC_GROUP, 0), (ALLOC_GROUP, 0), (GIVE, 0),
          (FREE, 2), (OFFLINE, 0x20), (ALLOC_ROOT, 0)]
    t1 = [(ALLOC_ROOT, 0), (TAKE, 0x80), (WALK, 0), (FREE, 0)]
    for des, nm in ((A, 'a'), (A_REPARENT, 'a-reparent'), (B1, 'b1'), (B5, 'b5')):
        seed(d, nm + '-remote-free-after-offline', des, [t0, t1])
        seed(d, nm + '-remote-free-after-offline-no-magazines', des, [t0, t1], magazine=0)
        # the same, switching threads at every decision: the free lands inside the offline
        seed(d, nm + '-remote-free-interleaved', des, [t0, t1], schedule=b'\x01\x00' * 40)
    # Children: a child's objects, its offline holding a reference (allocations
    # for the held DEAD group), then the parent's offline; objects kept by the
    # other thread past both offlines.
    t0 = [(CREATE, 0), (CREATE, 0x10), (ALLOC_GROUP, 1), (ALLOC_GROUP, 1), (ALLOC_GROUP, 0),
          (GIVE, 0), (OFFLINE, 0x41), (ALLOC_HELD, 0), (ALLOC_GROUP, 0), (OFFLINE, 0),
          (ALLOC_HELD, 0), (WALK, 0x10), (SHRINK, 1), (PUT_HELD, 0x10)]
    t1 = [(TAKE, 0), (ALLOC_ROOT, 0), (WALK, 0)]
    for des, nm in ((A, 'a'), (A_REPARENT, 'a-reparent'), (B1, 'b1'), (B5, 'b5')):
        seed(d, nm + '-child-held-past-offlines', des, [t0, t1])
    # B: two groups charged, one goes offline (its slot goes stale), a hit on
    # the other, then a miss on a third: the miss must drop the stale slot.
    t0 = [(CREATE, 0), (CREATE, 0), (ALLOC_GROUP, 0), (ALLOC_GROUP, 1), (OFFLINE, 0),
          (ALLOC_GROUP, 1), (CREATE, 0), (ALLOC_GROUP, 0), (ALLOC_GROUP, 1)]
    t1 = [(ALLOC_ROOT, 0)]
    seed(d, 'b5-stale-slot-dropped-by-a-miss', B5, [t0, t1])
    seed(d, 'b1-stale-slot-dropped-by-a-miss', B1, [t0, t1])
    # Three threads giving and taking each other's group objects while each
    # offlines its group; shrinker walks and shrinks between.
    t = [(CREATE, 0), (ALLOC_GROUP, 0), (ALLOC_GROUP, 0), (GIVE, 0), (TAKE, 0), (WALK, 0),
         (OFFLINE, 0x60), (TAKE, 1), (SHRINK, 1), (FREE, 1), (SHRINK, 0), (PUT_HELD, 0x10)]
    for des, nm in ((A, 'a'), (A_REPARENT, 'a-reparent'), (B5, 'b5')):
        seed(d, nm + '-three-threads-trade-objects', des, [t, t, t], schedule=bytes([1, 2, 0] * 30))
        seed(d, nm + '-three-threads-trade-objects-free-running', des, [t, t, t], policy=7)
    # Another thread allocates for our group (found published, held by a
    # reference) while we take it offline (a preemption point between the
    # unpublish and the offline): the allocation lands in the child being
    # deactivated, the reparented child, the root or the parent's handle.
    t0 = [(CREATE, 0), (CREATE, 0x10), (ALLOC_GROUP, 1), (OFFLINE, 0x82), (ALLOC_GROUP, 0), (OFFLINE, 0x81),
          (ALLOC_ROOT, 0)]
    t1 = [(FOREIGN, 4), (FOREIGN, 0), (FOREIGN, 4), (FOREIGN, 0), (FREE, 0), (FOREIGN, 4), (WALK, 0)]
    for des, nm in ((A, 'a'), (A_REPARENT, 'a-reparent'), (B1, 'b1'), (B5, 'b5')):
        seed(d, nm + '-foreign-alloc-during-offline', des, [t0, t1], schedule=b'\x00\x00\x01\x01' * 30)
        seed(d, nm + '-foreign-alloc-during-offline-free-running', des, [t0, t1], policy=7)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'fuzz/corpus')
