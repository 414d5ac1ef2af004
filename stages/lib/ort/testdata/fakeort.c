// A stand-in for a shared library that is not the onnxruntime this package
// needs, compiled by the tests with the C compiler cgo uses:
//
//   -DFAKE_VERSION='"1.18.0"'  an onnxruntime of another release: it exports
//                              OrtGetApiBase, reports that version and, like
//                              a real old release asked for C API 24, offers
//                              no API table (GetApi returns NULL);
//   -DFAKE_NO_API              a shared library without OrtGetApiBase.
#include <stddef.h>
#include <stdint.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION "1.18.0"
#endif

typedef struct {
	const void *(*GetApi)(uint32_t version);
	const char *(*GetVersionString)(void);
} OrtApiBase;

static const void *get_api(uint32_t version) {
	(void)version;
	return NULL;
}

static const char *get_version_string(void) { return FAKE_VERSION; }

static const OrtApiBase base = {get_api, get_version_string};

#ifndef FAKE_NO_API
const OrtApiBase *OrtGetApiBase(void) { return &base; }
#endif

// Keeps base referenced when OrtGetApiBase is compiled out.
const OrtApiBase *fake_ort_base(void) { return &base; }
