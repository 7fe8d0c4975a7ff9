//go:build !cgo

package types

// Without cgo, DOUBLE PRECISION's transcendental functions are the
// correctly rounded ones (funcs_float.go).

func libmExp(x float64) float64    { return crExp(x) }
func libmLog(x float64) float64    { return crLog(x) }
func libmLog10(x float64) float64  { return crLog10(x) }
func libmCbrt(x float64) float64   { return crCbrt(x) }
func libmPow(x, y float64) float64 { return crPow(x, y) }
