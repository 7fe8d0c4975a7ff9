package sim

// objectStore is an in-memory object store: whole-object puts, an
// if-absent put (the conditional write the input log relies on), gets.
type objectStore struct {
	objects map[string][]byte
}

func newObjectStore() *objectStore { return &objectStore{objects: map[string][]byte{}} }

func (s *objectStore) put(key string, data []byte) {
	s.objects[key] = append([]byte(nil), data...)
}

// putIfAbsent stores data unless key exists; it returns what key holds.
func (s *objectStore) putIfAbsent(key string, data []byte) (stored []byte, created bool) {
	if old, ok := s.objects[key]; ok {
		return old, false
	}
	s.put(key, data)
	return data, true
}

func (s *objectStore) get(key string) ([]byte, bool) {
	d, ok := s.objects[key]
	return d, ok
}
