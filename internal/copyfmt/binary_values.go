package copyfmt

import (
	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// appendValueBinary and parseValueBinary convert one value to and from
// its type's binary representation.
func appendValueBinary(dst []byte, v types.Value, t types.Type) ([]byte, error) {
	return nil, errs.Newf(errs.FeatureNotSupported, "the binary COPY format is not supported for type %s yet", t)
}

func parseValueBinary(src []byte, t types.Type) (types.Value, error) {
	return types.Null, errs.Newf(errs.FeatureNotSupported, "the binary COPY format is not supported for type %s yet", t)
}
