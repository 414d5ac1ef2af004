package ort

/*
#cgo LDFLAGS: -ldl

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The two entry points of OrtApiBase, as onnxruntime_c_api.h declares them.
// onnxruntime guarantees this struct never changes.
typedef struct {
	const void *(*GetApi)(uint32_t version);
	const char *(*GetVersionString)(void);
} mlsched_OrtApiBase;

typedef const mlsched_OrtApiBase *(*mlsched_GetApiBaseFn)(void);
typedef void mlsched_OrtStatus;

// Where the functions mlsched_providers calls sit in OrtApi, a struct of
// function pointers; see apiSlots in Go.
typedef struct {
	int GetErrorMessage, ReleaseStatus, GetAvailableProviders, ReleaseAvailableProviders;
} mlsched_slots;

typedef const char *(*mlsched_GetErrorMessageFn)(const mlsched_OrtStatus *);
typedef void (*mlsched_ReleaseStatusFn)(mlsched_OrtStatus *);
typedef mlsched_OrtStatus *(*mlsched_GetAvailableProvidersFn)(char ***, int *);
typedef mlsched_OrtStatus *(*mlsched_ReleaseAvailableProvidersFn)(char **, int);

// dlerror's message is per thread and Go may move a goroutine between
// threads between two cgo calls, so every function that can fail copies the
// message out in the same call. The caller frees *err.
static void mlsched_set_err(char **err, const char *prefix) {
	const char *msg = dlerror();
	size_t n = strlen(prefix) + (msg ? strlen(msg) : 0) + 3;
	*err = malloc(n);
	if (*err) {
		strcpy(*err, prefix);
		if (msg) {
			strcat(*err, ": ");
			strcat(*err, msg);
		}
	}
}

// mlsched_open loads path with every symbol bound now (RTLD_NOW), so that a
// missing dependency fails here with dlerror's message instead of at the
// first call into the library.
static void *mlsched_open(const char *path, char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) mlsched_set_err(err, "dlopen");
	return h;
}

static void mlsched_close(void *h) { dlclose(h); }

static const mlsched_OrtApiBase *mlsched_api_base(void *h, char **err) {
	dlerror();
	mlsched_GetApiBaseFn fn = (mlsched_GetApiBaseFn)dlsym(h, "OrtGetApiBase");
	if (!fn) {
		mlsched_set_err(err, "not an onnxruntime library (no OrtGetApiBase symbol)");
		return NULL;
	}
	const mlsched_OrtApiBase *base = fn();
	if (!base || !base->GetVersionString) {
		*err = strdup("not an onnxruntime library (OrtGetApiBase returned no API)");
		return NULL;
	}
	return base;
}

// mlsched_version returns the library's version string, which the library
// owns, or NULL with *err set.
static const char *mlsched_version(void *h, char **err) {
	const mlsched_OrtApiBase *base = mlsched_api_base(h, err);
	if (!base) return NULL;
	return base->GetVersionString();
}

// mlsched_providers returns the names of the execution providers the library
// was built with, malloc'ed (free each and the array), or NULL with *err set.
static char **mlsched_providers(void *h, uint32_t api_version, mlsched_slots slot, int *n, char **err) {
	const mlsched_OrtApiBase *base = mlsched_api_base(h, err);
	if (!base) return NULL;
	void *const *api = (void *const *)base->GetApi(api_version);
	if (!api) {
		*err = strdup("the library does not offer the onnxruntime C API version this build needs");
		return NULL;
	}
	char **names = NULL;
	int count = 0;
	mlsched_OrtStatus *st = ((mlsched_GetAvailableProvidersFn)api[slot.GetAvailableProviders])(&names, &count);
	if (st) {
		*err = strdup(((mlsched_GetErrorMessageFn)api[slot.GetErrorMessage])(st));
		((mlsched_ReleaseStatusFn)api[slot.ReleaseStatus])(st);
		return NULL;
	}
	char **out = calloc(count > 0 ? count : 1, sizeof(char *));
	for (int i = 0; out && i < count; i++) out[i] = strdup(names[i]);
	st = ((mlsched_ReleaseAvailableProvidersFn)api[slot.ReleaseAvailableProviders])(names, count);
	if (st) ((mlsched_ReleaseStatusFn)api[slot.ReleaseStatus])(st);
	if (!out) {
		*err = strdup("out of memory");
		return NULL;
	}
	*n = count;
	return out;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// ortAPIVersion is ORT_API_VERSION in the onnxruntime_c_api.h that
// onnxruntime_go v1.27.0 compiles against: the C API table it asks the
// library for, and so the one this package asks for too.
const ortAPIVersion = 24

// apiSlots are the indexes in OrtApi (offsetof(OrtApi, f)/sizeof(void*)) of
// the functions Providers calls. onnxruntime_go does not wrap
// GetAvailableProviders and keeps its own OrtApi pointer private, so this
// package calls through the table itself. Declaring four slots beats
// vendoring the 370 kB onnxruntime_c_api.h: onnxruntime only ever appends to
// OrtApi, so a slot never moves between releases. TestOrtAPISlots recomputes
// them from the header that onnxruntime_go v1.27.0 ships.
var apiSlots = C.mlsched_slots{
	GetErrorMessage:           2,
	ReleaseStatus:             93,
	GetAvailableProviders:     125,
	ReleaseAvailableProviders: 126,
}

// handle is a dlopen handle of an onnxruntime library.
type handle struct{ p unsafe.Pointer }

// takeErr turns a C error string set by the helpers above into a Go error
// and frees it.
func takeErr(cerr *C.char, fallback string) error {
	if cerr == nil {
		return errors.New(fallback)
	}
	defer C.free(unsafe.Pointer(cerr))
	return errors.New(C.GoString(cerr))
}

// dlopen loads the library at path and binds all its symbols.
func dlopen(path string) (handle, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	h := C.mlsched_open(cpath, &cerr)
	if h == nil {
		return handle{}, takeErr(cerr, "dlopen failed")
	}
	return handle{h}, nil
}

// close drops this handle's reference to the library.
func (h handle) close() {
	if h.p != nil {
		C.mlsched_close(h.p)
	}
}

// version asks the library for its version through OrtGetApiBase, which
// every onnxruntime release exports and which needs no particular C API
// version: the check that must work on the wrong release too.
func (h handle) version() (string, error) {
	var cerr *C.char
	v := C.mlsched_version(h.p, &cerr)
	if v == nil {
		return "", takeErr(cerr, "no version string")
	}
	return C.GoString(v), nil
}

// providers lists the execution providers the library was built with.
func (h handle) providers() ([]string, error) {
	var cerr *C.char
	var n C.int
	names := C.mlsched_providers(h.p, ortAPIVersion, apiSlots, &n, &cerr)
	if names == nil {
		return nil, takeErr(cerr, "no providers")
	}
	defer C.free(unsafe.Pointer(names))
	out := make([]string, 0, int(n))
	short := false
	for _, p := range unsafe.Slice(names, int(n)) {
		if p == nil {
			short = true
			continue
		}
		out = append(out, C.GoString(p))
		C.free(unsafe.Pointer(p))
	}
	if short {
		return nil, errors.New("out of memory copying provider names")
	}
	return out, nil
}
