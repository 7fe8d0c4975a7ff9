package sim

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/internal/cluster"
)

// etcd is a linearizable key-value store with leases, revisions and
// conditional transactions: the part of etcd's API the cluster uses. Time
// is the simulator's tick; a lease expires when a tick reaches its expiry,
// deleting the keys bound to it.
type etcd struct {
	rev       int64
	kv        map[string]kv
	leases    map[cluster.LeaseID]int64 // expiry tick
	ttl       map[cluster.LeaseID]int64
	nextLease cluster.LeaseID
}

type kv struct {
	value  string
	modRev int64
	lease  cluster.LeaseID
}

// compare is one condition of a transaction: the key's modification
// revision (0 for absent) or its value.
type compare struct {
	key     string
	byValue bool
	modRev  int64
	value   string
}

type put struct {
	key, value string
	lease      cluster.LeaseID
}

func newEtcd() *etcd {
	return &etcd{kv: map[string]kv{}, leases: map[cluster.LeaseID]int64{}, ttl: map[cluster.LeaseID]int64{}}
}

func (e *etcd) get(key string) (kv, bool) {
	v, ok := e.kv[key]
	return v, ok
}

// rangePrefix returns the keys under prefix in order.
func (e *etcd) rangePrefix(prefix string) []string {
	var keys []string
	for k := range e.kv {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// txn applies puts, all at one new revision, if every condition holds.
func (e *etcd) txn(cmps []compare, puts []put) (ok bool, rev int64) {
	for _, c := range cmps {
		v, found := e.kv[c.key]
		if c.byValue {
			if !found || v.value != c.value {
				return false, e.rev
			}
			continue
		}
		if !found && c.modRev != 0 || found && v.modRev != c.modRev {
			return false, e.rev
		}
	}
	if len(puts) == 0 {
		return true, e.rev
	}
	e.rev++
	for _, p := range puts {
		if p.lease != 0 {
			if _, live := e.leases[p.lease]; !live {
				continue
			}
		}
		e.kv[p.key] = kv{value: p.value, modRev: e.rev, lease: p.lease}
	}
	return true, e.rev
}

func (e *etcd) grant(now, ttl int64) cluster.LeaseID {
	e.nextLease++
	e.leases[e.nextLease] = now + ttl
	e.ttl[e.nextLease] = ttl
	return e.nextLease
}

// keepAlive renews a live lease from now on; false when it has expired.
func (e *etcd) keepAlive(id cluster.LeaseID, now int64) bool {
	if _, live := e.leases[id]; !live {
		return false
	}
	e.leases[id] = now + e.ttl[id]
	return true
}

// leaseExpiry is when a live lease expires; false once it has.
func (e *etcd) leaseExpiry(id cluster.LeaseID) (int64, bool) {
	t, live := e.leases[id]
	return t, live
}

// expire ends every lease whose expiry now reaches, deleting its keys.
func (e *etcd) expire(now int64) {
	var dead []cluster.LeaseID
	for id, t := range e.leases {
		if now >= t {
			dead = append(dead, id)
		}
	}
	if len(dead) == 0 {
		return
	}
	sort.Slice(dead, func(i, j int) bool { return dead[i] < dead[j] })
	e.rev++
	for _, id := range dead {
		delete(e.leases, id)
		for k, v := range e.kv {
			if v.lease == id {
				delete(e.kv, k)
			}
		}
	}
}
