package runtime

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pgWalk calls fn for every message in a parse tree, parents first.
func pgWalk(m proto.Message, fn func(any)) {
	if m == nil {
		return
	}
	walkMsg(m.ProtoReflect(), fn)
}

func walkMsg(m protoreflect.Message, fn func(any)) {
	if !m.IsValid() {
		return
	}
	fn(m.Interface())
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkMsg(l.Get(i).Message(), fn)
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			walkMsg(v.Message(), fn)
		}
		return true
	})
}
