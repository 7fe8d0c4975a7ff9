package runtime

// CatalogIdentity returns a value that stays the same while the catalog
// the session's statements see does not change, and differs after any DDL
// that changes it (committed, or inside the session's transaction block):
// what a cache of statements prepared from SQL text compares before it
// reuses one.
func (s *Session) CatalogIdentity() any { return s.catalog() }
