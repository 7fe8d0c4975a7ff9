//go:build !cgo

package types

import "math"

// Without cgo, DOUBLE PRECISION's exp, log, log10, cbrt and power are the
// correctly rounded ones (funcs_float.go); the trigonometric and
// hyperbolic functions are Go's, which may differ from the C library's in
// the last bit.

func libmExp(x float64) float64    { return crExp(x) }
func libmLog(x float64) float64    { return crLog(x) }
func libmLog10(x float64) float64  { return crLog10(x) }
func libmCbrt(x float64) float64   { return crCbrt(x) }
func libmPow(x, y float64) float64 { return crPow(x, y) }

func libmSin(x float64) float64      { return math.Sin(x) }
func libmCos(x float64) float64      { return math.Cos(x) }
func libmTan(x float64) float64      { return math.Tan(x) }
func libmAsin(x float64) float64     { return math.Asin(x) }
func libmAcos(x float64) float64     { return math.Acos(x) }
func libmAtan(x float64) float64     { return math.Atan(x) }
func libmAtan2(y, x float64) float64 { return math.Atan2(y, x) }
func libmSinh(x float64) float64     { return math.Sinh(x) }
func libmCosh(x float64) float64     { return math.Cosh(x) }
func libmTanh(x float64) float64     { return math.Tanh(x) }
func libmAsinh(x float64) float64    { return math.Asinh(x) }
func libmAcosh(x float64) float64    { return math.Acosh(x) }
func libmAtanh(x float64) float64    { return math.Atanh(x) }
