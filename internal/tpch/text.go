package tpch

import (
	"math/rand/v2"
	"strings"
)

// textPoolSize is the length of the pool comments are cut from. The
// specification's pool is 300 MB so that comments rarely repeat at large
// scale factors; at the scales a test loads, a megabyte gives every
// comment a distinct slice and takes a few milliseconds to build.
const textPoolSize = 1 << 20

// textPool is a long run of sentences of the specification's grammar
// (clause 4.2.2.14); a comment of text[min, max] is a slice of it of a
// random length in [min, max] at a random offset.
type textPool struct {
	text string
}

func newTextPool(rng *rand.Rand) *textPool {
	var b strings.Builder
	b.Grow(textPoolSize + 200)
	for b.Len() < textPoolSize {
		writeSentence(&b, rng)
		b.WriteByte(' ')
	}
	return &textPool{text: b.String()[:textPoolSize]}
}

// comment returns a text string of length in [min, max]: a slice of the
// pool, which may start or end inside a word, as the specification's do.
func (p *textPool) comment(rng *rand.Rand, min, max int) string {
	n := min + rng.IntN(max-min+1)
	off := rng.IntN(len(p.text) - n)
	return p.text[off : off+n]
}

func pick(rng *rand.Rand, words []string) string { return words[rng.IntN(len(words))] }

// writeSentence writes one sentence of the grammar:
//
//	sentence: noun-phrase verb-phrase terminator
//	        | noun-phrase verb-phrase prepositional-phrase terminator
//	        | noun-phrase verb-phrase noun-phrase terminator
//	        | noun-phrase prepositional-phrase verb-phrase noun-phrase terminator
//	        | noun-phrase prepositional-phrase verb-phrase prepositional-phrase terminator
func writeSentence(b *strings.Builder, rng *rand.Rand) {
	var parts []string
	switch rng.IntN(5) {
	case 0:
		parts = []string{nounPhrase(rng), verbPhrase(rng)}
	case 1:
		parts = []string{nounPhrase(rng), verbPhrase(rng), prepPhrase(rng)}
	case 2:
		parts = []string{nounPhrase(rng), verbPhrase(rng), nounPhrase(rng)}
	case 3:
		parts = []string{nounPhrase(rng), prepPhrase(rng), verbPhrase(rng), nounPhrase(rng)}
	default:
		parts = []string{nounPhrase(rng), prepPhrase(rng), verbPhrase(rng), prepPhrase(rng)}
	}
	b.WriteString(strings.Join(parts, " "))
	b.WriteString(pick(rng, terminators))
}

// nounPhrase: noun | adjective noun | adjective, adjective noun | adverb adjective noun.
func nounPhrase(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return pick(rng, nouns)
	case 1:
		return pick(rng, adjectives) + " " + pick(rng, nouns)
	case 2:
		return pick(rng, adjectives) + ", " + pick(rng, adjectives) + " " + pick(rng, nouns)
	default:
		return pick(rng, adverbs) + " " + pick(rng, adjectives) + " " + pick(rng, nouns)
	}
}

// verbPhrase: verb | auxiliary verb | verb adverb | auxiliary verb adverb.
func verbPhrase(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return pick(rng, verbs)
	case 1:
		return pick(rng, auxiliaries) + " " + pick(rng, verbs)
	case 2:
		return pick(rng, verbs) + " " + pick(rng, adverbs)
	default:
		return pick(rng, auxiliaries) + " " + pick(rng, verbs) + " " + pick(rng, adverbs)
	}
}

// prepPhrase: preposition the noun-phrase.
func prepPhrase(rng *rand.Rand) string {
	return pick(rng, prepositions) + " the " + nounPhrase(rng)
}

// vstringAlphabet holds the 64 characters of a v-string (clause 4.2.2.7).
const vstringAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,."

// vstring returns a random string of a length in [min, max] over
// vstringAlphabet: the addresses.
func vstring(rng *rand.Rand, min, max int) string {
	b := make([]byte, min+rng.IntN(max-min+1))
	for i := range b {
		b[i] = vstringAlphabet[rng.IntN(len(vstringAlphabet))]
	}
	return string(b)
}
