//go:build cgo

package types

// #cgo LDFLAGS: -lm
// #include <math.h>
import "C"

// With cgo, DOUBLE PRECISION's transcendental functions call the C
// library's, as PostgreSQL does, so that results agree to the last bit
// with a PostgreSQL server using the same C library.

func libmExp(x float64) float64    { return float64(C.exp(C.double(x))) }
func libmLog(x float64) float64    { return float64(C.log(C.double(x))) }
func libmLog10(x float64) float64  { return float64(C.log10(C.double(x))) }
func libmCbrt(x float64) float64   { return float64(C.cbrt(C.double(x))) }
func libmPow(x, y float64) float64 { return float64(C.pow(C.double(x), C.double(y))) }
