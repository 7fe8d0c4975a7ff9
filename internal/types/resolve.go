package types

// selectSignature resolves a call over candidate argument-type lists for
// the input types, as PostgreSQL's func_select_candidate does once the
// exact matches have been ruled out: it keeps the candidates that accept
// every input through implicit coercions and narrows them down by exact
// matches, preferred types and the categories of unknown inputs. It
// returns the chosen candidate's index, or -1 with a nil error when no
// candidate accepts the inputs and with errAmbiguous when several do
// equally well.
func selectSignature(sigs [][]TypeID, in []TypeID) (int, error) {
	var buf [16]int
	ok := buf[:0]
	for c, sig := range sigs {
		if len(sig) != len(in) {
			continue
		}
		match := true
		for i := range in {
			if !implicitlyCoercible(in[i], sig[i]) {
				match = false
				break
			}
		}
		if match {
			ok = append(ok, c)
		}
	}
	switch len(ok) {
	case 0:
		return -1, nil
	case 1:
		return ok[0], nil
	}
	if c := selectCandidate(ok, sigs, in); c >= 0 {
		return c, nil
	}
	return -1, errAmbiguous
}

// selectCandidate narrows several applicable candidates down to one, or
// returns -1 when it cannot (func_select_candidate).
func selectCandidate(cands []int, sigs [][]TypeID, in []TypeID) int {
	n := len(in)
	unknowns := 0
	for _, t := range in {
		if t == Unknown {
			unknowns++
		}
	}
	// keepBest keeps the candidates with the highest score.
	keepBest := func(cs []int, score func(int) int) []int {
		best := -1
		var out []int
		for _, c := range cs {
			s := score(c)
			switch {
			case s > best:
				best = s
				out = append(out[:0], c)
			case s == best:
				out = append(out, c)
			}
		}
		return out
	}
	// 1. Most exact matches on the known inputs.
	cands = keepBest(cands, func(c int) int {
		m := 0
		for i := 0; i < n; i++ {
			if in[i] != Unknown && sigs[c][i] == in[i] {
				m++
			}
		}
		return m
	})
	if len(cands) == 1 {
		return cands[0]
	}
	// 2. Most exact-or-preferred types at the positions needing coercion.
	cands = keepBest(cands, func(c int) int {
		m := 0
		for i := 0; i < n; i++ {
			if in[i] == Unknown {
				continue
			}
			if sigs[c][i] == in[i] || (sigs[c][i].preferred() && sigs[c][i].category() == in[i].category()) {
				m++
			}
		}
		return m
	})
	if len(cands) == 1 {
		return cands[0]
	}
	if unknowns == 0 {
		return -1
	}
	// 3. Resolve unknown inputs by the categories the candidates accept
	// there: string wins; otherwise all candidates must agree.
	slotCat := make([]category, n)
	slotPreferred := make([]bool, n)
	resolved := true
	for i := 0; i < n && resolved; i++ {
		if in[i] != Unknown {
			continue
		}
		var cat category
		pref, conflict := false, false
		for _, c := range cands {
			cc := sigs[c][i].category()
			cp := sigs[c][i].preferred()
			switch {
			case cat == 0:
				cat, pref = cc, cp
			case cc == cat:
				pref = pref || cp
			case cc == catString:
				cat, pref = cc, cp
			default:
				conflict = true
			}
		}
		if conflict && cat != catString {
			resolved = false
			break
		}
		slotCat[i], slotPreferred[i] = cat, pref
	}
	if resolved {
		var kept []int
		for _, c := range cands {
			keep := true
			for i := 0; i < n; i++ {
				if in[i] != Unknown {
					continue
				}
				if sigs[c][i].category() != slotCat[i] || (slotPreferred[i] && !sigs[c][i].preferred()) {
					keep = false
					break
				}
			}
			if keep {
				kept = append(kept, c)
			}
		}
		if len(kept) == 1 {
			return kept[0]
		}
		if len(kept) > 0 {
			cands = kept
		}
	}
	// 4. If the known inputs all have one type, assume the unknowns have it
	// too and see whether exactly one candidate accepts that.
	if unknowns < n {
		known := Unknown
		for _, t := range in {
			if t == Unknown {
				continue
			}
			if known != Unknown && t != known {
				return -1
			}
			known = t
		}
		found := -1
		for _, c := range cands {
			okAll := true
			for i := 0; i < n; i++ {
				if !implicitlyCoercible(known, sigs[c][i]) {
					okAll = false
					break
				}
			}
			if okAll {
				if found >= 0 {
					return -1
				}
				found = c
			}
		}
		return found
	}
	return -1
}
