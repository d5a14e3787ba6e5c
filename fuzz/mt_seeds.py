# SPDX-License-Identifier: BSD-2-Clause
# fuzz/mt_seeds.py - the concurrent targets' inputs (fuzz_memgroup_mt,
# fuzz_registry_mt): the hand-written seeds of issue 18 (named, see
# docs/fuzzing.md), and the re-encoding of a corpus when a target gains
# operations.
#
#   python3 fuzz/mt_seeds.py seeds fuzz/corpus     # (re)write the named seeds
#   python3 fuzz/mt_seeds.py remap TARGET OLD DIR  # op bytes -> op % OLD, in place
#
# Input layout of both (fuzz/sched.h): byte 0 the threads (2 + b % 3), the
# policy ((b >> 2) % 8: 0-4 bytes, 5-6 PCT, 7 free running) and PCT's depth;
# byte 1 the allocation to fail (b % 64, 0: none); then per thread a length
# (b % 13) and that many (op, arg) pairs; the rest is the schedule, one byte
# per decision (among the threads that can run, in order: b % their count).
# A target decodes op % NOPS, so when it gains operations the corpus is
# re-encoded once with every op byte reduced modulo the old count ("remap"):
# the byte then means the same operation under the new count, and every
# seed drives what it drove before.
import os, sys

LIMIT = {'memgroup_mt': 600, 'registry_mt': 512}
MAXOPS = 12


def remap(target, old, d):
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        b = bytearray(open(p, 'rb').read())
        n = min(len(b), LIMIT[target])
        if n < 2:
            continue
        threads = 2 + b[0] % 3
        i = 2
        for _ in range(threads):
            if i >= n:
                break
            ln = b[i] % (MAXOPS + 1)
            i += 1
            for _ in range(ln):
                if i < n:
                    b[i] %= old
                i += 2
        open(p, 'wb').write(bytes(b))


# Byte 0 for @threads threads under @policy ('bytes' or 'free').
def mode(threads, policy='bytes'):
    pol = {'bytes': 0, 'free': 7}[policy]
    return (threads - 2) | pol << 2


def seed(path, threads, scripts, schedule=b'', policy='bytes', fail=0):
    assert len(scripts) == threads
    b = bytearray([mode(threads, policy), fail])
    for s in scripts:
        assert len(s) <= MAXOPS, path
        b.append(len(s))
        for op, arg in s:
            b += bytes([op, arg])
    b += bytes(schedule)
    assert len(b) < 512, path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, 'wb').write(bytes(b))


# fuzz_memgroup_mt's operations (op(): arg bits as it reads them).
(M_CREATE, M_OFFLINE, M_ADD, M_DEL, M_WALK, M_FOREIGN, M_CHARGE, M_STAT, M_DRIVE, M_READS, M_SHRINK,
 M_OBJCG_GROUP, M_HOLD, M_HELD_CALL, M_OBSERVE, M_PUT_UNBALANCED, M_CHURN, M_READ_LOOP) = range(18)
# fuzz_registry_mt's.
(R_REG, R_UNREG, R_DYN, R_GWALK, R_WALK, R_OBJS, R_GROUP, R_SYNC, R_BEHAV, R_DRIVE, R_VICTIM,
 R_CHILD, R_HOLD, R_HELD_CALL, R_OBSERVE, R_NEUTRAL, R_FILL, R_DOORS) = range(18)

# Group-taking calls of op 13 (held) with arg 2 * sel: every one of the 8, in turn.
HELD_CALLS = [(M_HELD_CALL, 2 * sel) for sel in range(8)]


def seeds(out):
    mg = lambda name: os.path.join(out, 'memgroup_mt', name)
    rg = lambda name: os.path.join(out, 'registry_mt', name)

    # --- fuzz_memgroup_mt ---
    # A child held by a reference past its own offline and its parent's; the
    # reference dropped last releases the child, then the parent (the order
    # the statistics' final moves rely on); the callbacks run.
    seed(mg('issue18-child-held-past-parent-offline'), 2, [
        [(M_CREATE, 0x00), (M_CREATE, 0x31), (M_STAT, 0x00), (M_HOLD, 0x04), (M_OFFLINE, 0x01),
         (M_OFFLINE, 0x00), (M_HOLD, 0x04), (M_DRIVE, 0)],
        []])
    # One put too many on an online group with no other reference: reported,
    # refused, the group stays online; later offline works.
    seed(mg('issue18-put-without-get-online'), 2, [
        [(M_CREATE, 0x00), (M_PUT_UNBALANCED, 0x60), (M_CHARGE, 0x05), (M_OFFLINE, 0x00), (M_DRIVE, 0)],
        []])
    # Threads running freely: one churns groups (create, publish, unpublish,
    # offline: released at once, readers stopped meanwhile), the others read
    # the published one's charge handle inside the set's read section.
    seed(mg('issue18-free-churn-vs-get-objcg'), 2, [
        [(M_CHURN, 0x03)] * 6,
        [(M_READ_LOOP, 0x43)] * 6],
        policy='free')
    seed(mg('issue18-free-churn-vs-get-objcg-3-readers'), 4, [
        [(M_CHURN, 0x03)] * 6,
        [(M_READ_LOOP, 0x47)] * 4, [(M_READ_LOOP, 0x43)] * 4, [(M_READ_LOOP, 0x4b)] * 4],
        policy='free')
    seed(mg('issue18-free-churn-children-vs-get-objcg'), 2, [
        [(M_CREATE, 0x00)] + [(M_CHURN, 0x63)] * 6,
        [(M_READ_LOOP, 0x43)] * 6],
        policy='free')
    # The same with the readers also setting the shrinker's bit, walking the
    # group and its list (lookups racing the releases), freely and under the
    # baton (alternating threads).
    churn_walks = [[(M_CREATE, 0x00)] + [(M_CHURN, 0x63)] * 5, [(M_READ_LOOP, 0x63)] * 5]
    seed(mg('issue18-free-churn-children-vs-walks-and-bits'), 2, churn_walks, policy='free')
    seed(mg('issue18-churn-children-vs-walks-and-bits'), 2, churn_walks, [0, 1] * 100)
    # Another thread's group found in the set's read section (no reference)
    # while its owner offlines it and the callbacks run: the calls of op 14
    # on a FREED group (references, get and put refused; its lists; its
    # charge handle, the shrinker bit, items onto its lists).
    owner = [(M_CREATE, 0x00), (M_CHARGE, 0x05), (M_ADD, 0x60), (M_OFFLINE, 0x42)]
    seed(mg('issue18-observe-group-released-in-set-section'), 2, [
        owner, [(M_OBSERVE, 0x60), (M_OBSERVE, 0x00)]], [0] * 6 + [1] * 2 + [0] * 80)
    seed(mg('issue18-observe-objcg-bit-list-of-released-group'), 2, [
        owner, [(M_OBSERVE, 0x00), (M_OBSERVE, 0x24)]], [0] * 6 + [1] * 8 + [0] * 80)
    # Another thread's group held by a reference past its offline: every
    # call of op 13 on it, DEAD.
    seed(mg('issue18-foreign-group-held-past-its-offline'), 2, [
        [(M_CREATE, 0x00), (M_STAT, 0x00), (M_ADD, 0x60), (M_OFFLINE, 0x42)],
        [(M_HOLD, 0x30)] + HELD_CALLS + [(M_HOLD, 0x30), (M_DRIVE, 0)]], [0] * 6 + [1] * 2 + [0] * 80)

    # --- fuzz_registry_mt ---
    # Issue 18, case 2: a bit set in a DEAD group held by a reference, after
    # its destroy and the callbacks (which freed its maps).
    seed(rg('issue18-bit-in-dead-group-held-by-reference'), 2, [
        [(R_GROUP, 0), (R_HOLD, 0x00), (R_GROUP, 0x01), (R_HELD_CALL, 0x02), (R_HOLD, 0x00)], []])
    # Case 3: a bit set inside the set's read section in another thread's
    # group, destroyed and released meanwhile (the registry's state must
    # outlive the set's section).
    seed(rg('issue18-bit-in-group-released-inside-set-section'), 2, [
        [(R_GROUP, 0), (R_GROUP, 1)], [(R_OBSERVE, 0x04)]], [0] * 4 + [1] * 3 + [0] * 60)
    # Case 5: both doors to offline from a read section of the registry's
    # domain (a child, then the group), then from a shrinker callback
    # (the walked group): -EDEADLK, nothing changes.
    seed(rg('issue18-offline-inside-registry-section'), 2, [
        [(R_GROUP, 0), (R_DOORS, 0), (R_CHILD, 0), (R_DOORS, 0), (R_CHILD, 0), (R_GROUP, 0)], []])
    seed(rg('issue18-offline-doors-from-a-callback'), 2, [
        [(R_GROUP, 0), (R_REG, 2), (R_DOORS, 3), (R_OBJS, 48), (R_WALK, 0), (R_WALK, 0), (R_WALK, 0)], []],
        [1] + [0] * 80)
    # Another thread's child held past its destroy (DEAD), every call of op
    # 13 on it; and one found in the set's section past its offline (the
    # other door), FREED.
    seed(rg('issue18-foreign-child-held-past-its-destroy'), 2, [
        [(R_GROUP, 0), (R_CHILD, 0), (R_CHILD, 1)],
        [(R_HOLD, 0x30)] + [(R_HELD_CALL, 2 * sel) for sel in range(8)] + [(R_HOLD, 0x30), (R_DRIVE, 0)]],
        [0] * 8 + [1] * 3 + [0] * 80)
    seed(rg('issue18-observe-child-released-by-offline-door'), 2, [
        [(R_GROUP, 0), (R_CHILD, 0), (R_CHILD, 3)], [(R_OBSERVE, 0x94), (R_OBSERVE, 0x80)]],
        [0] * 8 + [1] * 3 + [0] * 80)
    # The debug interface through a neutral shrinker on a DEAD child held by
    # a reference (-ENOENT: walked no more) and on our own live group.
    seed(rg('issue18-debug-calls-on-dead-and-live-groups'), 2, [
        [(R_GROUP, 0), (R_CHILD, 0), (R_CHILD, 1)],
        [(R_NEUTRAL, 0), (R_GROUP, 0), (R_HOLD, 0x30), (R_HOLD, 0x01), (R_HELD_CALL, 6), (R_HELD_CALL, 12),
         (R_HELD_CALL, 7), (R_HELD_CALL, 13), (R_HOLD, 0x30), (R_HOLD, 0x01), (R_DRIVE, 0)]],
        [0] * 8 + [1] * 10 + [0] * 80)
    # (a) Deferred work added by another thread to the counter a walk of a
    # neutral shrinker took it from, while the walk's scan runs: the ledger
    # must keep both.
    seed(rg('issue18-deferred-work-added-during-a-walk'), 2, [
        [(R_GROUP, 0), (R_NEUTRAL, 0), (R_NEUTRAL, 0x10), (R_WALK, 0)],
        [(R_NEUTRAL, 0), (R_NEUTRAL, 0x30)]], [0] * 16 + [1] * 60)
    # (b) 80 memcg-aware fillers: ids past the maps' first growth (64), each
    # below the maps' size and settable in a group and its child.
    seed(rg('issue18-ids-past-the-first-growth'), 2, [
        [(R_GROUP, 0), (R_CHILD, 0), (R_FILL, 9), (R_FILL, 0x89)], []])
    # (d) A group walk parked between two sections (another thread waits for
    # a grace period) while a third party grows the maps and the callbacks
    # free the old ones: the walk must take the maps again.
    seed(rg('issue18-group-walk-parked-across-map-growth'), 2, [
        [(R_GROUP, 0), (R_REG, 2), (R_OBJS, 0), (R_WALK, 0)],
        [(R_SYNC, 0), (R_FILL, 9), (R_DRIVE, 0)]], [0] * 11 + [1] * 120)
    # A real bug (docs/fuzzing.md): a global ksync_shrinker_add_deferred()
    # that finds the record, then the owner's unregister runs to the end,
    # then the add lands: it returns 0 but the work is in no counter of the
    # ledger. Passes as checked in (the add is counted apart); fails with
    # KSYNC_FUZZ_STRICT_LEDGER=1.
    seed(rg('bug-add-deferred-racing-unregister-lost'), 2, [
        [(R_NEUTRAL, 0), (R_NEUTRAL, 0xc0)], [(R_NEUTRAL, 0), (R_NEUTRAL, 0x20)]], [0] * 2 + [1] * 7 + [0] * 60)


if __name__ == '__main__':
    if sys.argv[1] == 'remap':
        remap(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == 'seeds':
        seeds(sys.argv[2])
    else:
        sys.exit('usage: mt_seeds.py seeds OUTDIR | remap TARGET OLD DIR')
