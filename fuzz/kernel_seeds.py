# SPDX-License-Identifier: BSD-2-Clause
# fuzz/kernel_seeds.py OUTDIR - writes the hand-written seeds of fuzz/corpus
# (named kernel-*), modelled on the kernel bugs issue 12 names; see
# docs/fuzzing.md, "Corpus and replay". Regenerate them (python3
# fuzz/kernel_seeds.py fuzz/corpus) when a target's input layout changes.
# Byte layouts:
# fuzz_registry: byte 0 picks 1 + b % 4 nodes, then (op % 14, a, b) triples;
#   the last byte, when below 64, also fails the (b % 32)th allocation;
#   slot k = a % 12 (0-7 owned via ksync_shrinker_alloc, 8-11 classic prealloc/register),
#   group g = b % 6, nid = (b >> 4) % (nodes + 1); for op 0 b is the flags byte (bit0 memcg, bit1 numa).
# fuzz_memgroup: (op % 9, a, b) triples; group = a % (groups created so far),
#   nid = b & 1, item = (b >> 1) % 32; a & 0x80 picks a group's list over the global one.
import os, sys
out = sys.argv[1]

ALLOC, REG, FREE, MISUSE, GCREATE, GDESTROY, GOBJS, OBJS, BADBIT, GWALK0, GWALK, WALK0, WALKP, SYNC = range(14)
MEMCG, NUMA = 1, 2

def reg(name, nodes, ops, fail_nth=None):
    # fail_nth: end with (synchronize_shrinkers, 0, N): the last byte, below
    # 64, fails the (N % 32)th allocation of the input (registry_fuzz.c).
    # Without it the last byte must be 0 or at least 64 (no failure).
    if fail_nth is not None:
        ops = ops + [(SYNC, 0, fail_nth)]
    b = bytes([nodes - 1]) + bytes(x for op in ops for x in op)
    assert fail_nth is not None or b[-1] == 0 or b[-1] >= 64, name
    assert len(b) < 1024
    open(os.path.join(out, 'registry', name), 'wb').write(b)

def gb(g, nid=0):  # the b byte naming group g and node nid
    return g | nid << 4

# Prealloc, prealloc again (-EBUSY, the kernel's double prealloc), free the
# prealloced one, prealloc again (its id reused), register, prealloc a
# registered one and register twice (-EBUSY), walk, unregister.
reg('kernel-prealloc-twice', 1, [
    (ALLOC, 8, MEMCG), (ALLOC, 8, MEMCG), (FREE, 8, 0),
    (ALLOC, 8, MEMCG), (ALLOC, 8, MEMCG), (REG, 8, 0), (ALLOC, 8, MEMCG), (REG, 8, 0),
    (GWALK0, 0, 0), (FREE, 8, 0), (GWALK0, 0, 0), (SYNC, 0, 0)])

# The same with every classic slot, memcg and numa aware on two nodes, a group
# holding objects and its bit set between the double prealloc and register.
reg('kernel-prealloc-twice-memcg-numa', 2, [
    (GCREATE, 0, gb(0)),
    (ALLOC, 8, MEMCG | NUMA), (ALLOC, 9, MEMCG), (ALLOC, 8, MEMCG | NUMA), (ALLOC, 9, MEMCG),
    (GOBJS, 8, gb(0, 1)), (GOBJS, 9, gb(0, 0)), (ALLOC, 8, 0), (ALLOC, 9, 0),
    (REG, 8, 0), (REG, 9, 0), (WALK0, 8, gb(0, 1)), (WALK0, 9, gb(0, 0)),
    (ALLOC, 10, MEMCG), (ALLOC, 10, MEMCG), (FREE, 10, 0), (ALLOC, 11, MEMCG), (ALLOC, 11, MEMCG),
    (REG, 11, 0), (GWALK0, 0, gb(0, 1)), (FREE, 8, 0), (FREE, 9, 0), (FREE, 11, 0),
    (GDESTROY, 0, gb(0))])

# Prealloc twice and never register: teardown frees the prealloced shrinker
# (the kernel's leak when register failed after prealloc).
reg('kernel-prealloc-twice-never-registered', 1, [
    (ALLOC, 10, MEMCG), (ALLOC, 10, MEMCG), (ALLOC, 11, 0), (ALLOC, 11, 0)])

# register_shrinker's failure paths, as far as a single thread without
# allocation failure reaches them: register of a never-prepared shrinker
# (-EINVAL), unregister of one never registered (-ENOENT), of a prepared one
# (-ENOENT), the classic unregister of an owned shrinker (-EINVAL),
# shrinker_free of a registered classic one (-EINVAL), and after each error
# the ids: a freed id is the lowest free one and is reused.
reg('kernel-register-failure-paths', 1, [
    (REG, 9, 0), (MISUSE, 9, 0), (ALLOC, 9, MEMCG), (MISUSE, 9, 0),
    (ALLOC, 0, MEMCG), (ALLOC, 1, MEMCG), (ALLOC, 2, MEMCG), (MISUSE, 1, 0),
    (REG, 0, 0), (REG, 0, 0), (MISUSE, 0, 0), (FREE, 1, 0), (ALLOC, 3, MEMCG),
    (REG, 9, 0), (REG, 9, 0), (MISUSE, 9, 0), (FREE, 9, 0), (MISUSE, 9, 0), (REG, 9, 0),
    (ALLOC, 9, MEMCG), (REG, 9, 0), (GWALK0, 0, 0), (FREE, 0, 0), (FREE, 2, 0),
    (ALLOC, 4, MEMCG), (ALLOC, 5, MEMCG), (REG, 4, 0), (REG, 5, 0), (GWALK0, 0, 0)])

# shrinker_alloc then shrinker_free without register (the kernel's error
# path when a caller's setup fails after shrinker_alloc), with groups alive
# and bits set on the unregistered shrinker.
reg('kernel-alloc-then-free-unregistered', 1, [
    (GCREATE, 0, gb(0)), (GCREATE, 1, gb(1)),
    (ALLOC, 0, MEMCG), (GOBJS, 0, gb(0)), (GOBJS, 0, gb(1)), (FREE, 0, 0),
    (ALLOC, 1, MEMCG), (WALK0, 0, gb(0)), (WALK0, 0, gb(1)), (REG, 1, 0),
    (GOBJS, 1, gb(1)), (WALK0, 0, gb(1)), (FREE, 1, 0), (GDESTROY, 0, gb(0)),
    (GDESTROY, 0, gb(1) + 66)])  # 67: group 1, and no allocation failure

# Group destroy with children (-EBUSY), misuse bits, walks on a bad node.
reg('kernel-group-destroy-busy-bad-bits', 2, [
    (GCREATE, 0, gb(0)), (GCREATE, 1, gb(1)), (GCREATE, 1, gb(2)),  # 1 and 2 under 0
    (GDESTROY, 0, gb(0)), (BADBIT, 2, gb(1)), (BADBIT, 4, gb(2)),
    (ALLOC, 0, MEMCG | NUMA), (REG, 0, 0), (GOBJS, 0, gb(1, 1)), (GOBJS, 0, gb(2, 0)),
    (GWALK0, 0, gb(0, 2)), (WALK0, 0, gb(1, 1)), (WALKP, 5, gb(2, 0)),
    (GDESTROY, 0, gb(1)), (GDESTROY, 0, gb(0)), (GDESTROY, 0, gb(2)), (GDESTROY, 0, gb(0))])

# register_shrinker's failure paths with an allocation that really fails
# (the last byte): on four nodes, the prealloc of a memcg and NUMA aware
# classic shrinker (allocation 1: no id may stay taken, the prealloc is
# tried again), shrinker_alloc (allocation 2), and a group created while two
# such shrinkers are registered, its per-node shrinker maps failing part way
# (allocations 3-23: the first, one in the middle, the last; the kernel's
# alloc_shrinker_info error path), then objects, walks and frees as usual.
oom = [(ALLOC, 8, MEMCG | NUMA), (ALLOC, 8, MEMCG | NUMA), (REG, 8, 0),
       (ALLOC, 0, MEMCG | NUMA), (REG, 0, 0), (GCREATE, 0, gb(0)),
       (GOBJS, 8, gb(0, 1)), (GOBJS, 0, gb(0, 3)), (WALK0, 0, gb(0, 1)), (GWALK0, 0, gb(0, 3)),
       (FREE, 8, 0), (FREE, 0, 0)]
reg('kernel-prealloc-fails', 4, oom, fail_nth=1)
reg('kernel-shrinker-alloc-fails', 4, oom, fail_nth=2)
reg('kernel-group-maps-fail-first', 4, oom, fail_nth=3)
reg('kernel-group-maps-fail-part-way', 4, oom, fail_nth=13)
reg('kernel-group-maps-fail-last', 4, oom, fail_nth=23)

# ---------------------------------------------------------------- memgroup
CREATE, OFFLINE, ADD, DEL, WALK1, WALK2, CHARGE, CHARGE2, STAT = range(9)

class MG:
    def __init__(self):
        self.ops, self.ng = [], 0
    def a_for(self, g, on_group=True):
        # a with a % ng == g and bit 7 as asked
        for a in range(256):
            if (self.ng and a % self.ng == g) and bool(a & 0x80) == on_group:
                return a
        raise ValueError
    def create(self, parent=None):
        if parent is None:
            self.ops.append((CREATE, 0, 0))  # b & 1 == 0: top level
        else:
            self.ops.append((CREATE, self.a_for(parent), 1))
        self.ng += 1
        return self.ng - 1
    def offline(self, g): self.ops.append((OFFLINE, self.a_for(g), 0))
    def add(self, item, g=None, nid=0):
        a = self.a_for(g) if g is not None else 0
        self.ops.append((ADD, a, item << 1 | nid))
    def dele(self, item): self.ops.append((DEL, 0, item << 1))
    def walk(self, g=None, budget=11):  # b % 12 is the budget, b & 1 the node: node = budget & 1
        a = self.a_for(g) if g is not None else 0
        self.ops.append((WALK1, a, budget))
    def charge(self, g, objs, nid=0): self.ops.append((CHARGE, self.a_for(g), ((objs + 2) % 9) if nid == 0 else 0))
    def write(self, name):
        b = bytes(x for op in self.ops for x in op)
        assert len(b) < 1024
        open(os.path.join(out, 'memgroup', name), 'wb').write(b)

# The kernel's list_lru leak on an error path: a group's lists must not be
# lost when the group goes away with items on them. Items on a group's
# lists, the group offlined (reparented to its parent, then to the global
# list when the parent goes), added twice (false), deleted when absent (false).
m = MG()
g0 = m.create(); g1 = m.create(g0); g2 = m.create(g1)
for it, g in ((0, g2), (1, g2), (2, g1), (3, g0), (4, None)):
    m.add(it, g)
m.add(0, g2); m.add(4, None)  # already on a list
m.offline(g1)                  # -EBUSY: g2 is online under it
m.offline(g2); m.walk(g0); m.offline(g1); m.offline(g0)
m.dele(7); m.walk(None); m.add(5, None); m.dele(5); m.dele(5)
m.write('kernel-list-lru-offline-with-items')

# Items left on lists at the end (teardown deletes them and destroys the
# list_lru), charges through handles that outlive their group's offline.
m = MG()
g0 = m.create(); g1 = m.create(g0)
m.charge(g1, 5); m.charge(g0, 3)
for it in range(8):
    m.add(it, g1 if it % 2 else g0, nid=it & 1)
m.offline(g1); m.charge(g1, -2); m.charge(g1, 6)
m.add(9, g0, 1)
m.write('kernel-list-lru-teardown-with-items')

# A walk that skips and removes across a reparent, with an empty budget.
m = MG()
g0 = m.create(); g1 = m.create(g0); g2 = m.create()
for it in range(10):
    m.add(it, (g1, g0, g2)[it % 3])
m.ops.append((WALK1, m.a_for(g1), 0))   # budget 0
m.ops.append((WALK2, m.a_for(g1), 6))
m.offline(g1)
m.ops.append((WALK1, m.a_for(g0) | 0x80, 10))
m.offline(g2); m.ops.append((WALK1, 0x13, 11))
m.write('kernel-list-lru-walk-across-reparent')
