/*
** python/gk/gkpy.c -- the two functions of the Python layer that must be C.
**
** Everything else in the gk package is ctypes.  These two run when another
** library lets go of a DLPack tensor: a consumer (numpy, torch, gk itself)
** calls a tensor's deleter, and Python destroys an unconsumed capsule.  That
** can happen at any moment -- on a thread without the GIL, or in the middle
** of an exception propagating (a temporary dropped while unwinding) -- and a
** ctypes callback cannot run then: it would fail with "returned a result
** with an exception set" and lose the real error.  So the deleter of every
** tensor the package makes is gkpy_deleter: it takes the GIL, sets the
** pending exception aside, drops the one reference the tensor's manager_ctx
** holds (a tuple of what it keeps alive), and puts the exception back.
**
** No Python headers: the few CPython functions are handed over by
** gkpy_init (ctypes.pythonapi), so this builds with the same compiler as
** libgk and works with any CPython 3.
*/
#include <stddef.h>
#include <stdint.h>

typedef struct {            /* DLPack v0.8 DLManagedTensor, as far as used here */
  unsigned char dl_tensor[48];
  void *manager_ctx;
  void (*deleter)(void *self);
} dl_managed;

static struct {
  int (*gil_ensure)(void);
  void (*gil_release)(int);
  void (*err_fetch)(void **, void **, void **);
  void (*err_restore)(void *, void *, void *);
  void (*decref)(void *);
  int (*is_initialized)(void);
  int (*capsule_is_valid)(void *, const char *);
  void *(*capsule_get_pointer)(void *, const char *);
} py;

static const char dltensor[] = "dltensor";

void gkpy_init(void **fns) {
  py.gil_ensure = (int (*)(void))fns[0];
  py.gil_release = (void (*)(int))fns[1];
  py.err_fetch = (void (*)(void **, void **, void **))fns[2];
  py.err_restore = (void (*)(void *, void *, void *))fns[3];
  py.decref = (void (*)(void *))fns[4];
  py.is_initialized = (int (*)(void))fns[5];
  py.capsule_is_valid = (int (*)(void *, const char *))fns[6];
  py.capsule_get_pointer = (void *(*)(void *, const char *))fns[7];
}

/* The capsule name, in static storage (a capsule keeps the pointer). */
const char *gkpy_capsule_name(void) { return dltensor; }

/* The deleter of every DLManagedTensor the package makes; any thread. */
void gkpy_deleter(void *self) {
  dl_managed *t = self;
  if (!t || !py.is_initialized || !py.is_initialized()) return;   /* interpreter gone: leak */
  int st = py.gil_ensure();
  void *type, *value, *tb;
  py.err_fetch(&type, &value, &tb);
  py.decref(t->manager_ctx);           /* may free t itself: not read after this */
  py.err_restore(type, value, tb);
  py.gil_release(st);
}

/* The destructor of the capsules Array.__dlpack__ returns (GIL held): a
** capsule still named "dltensor" was never consumed, so its tensor's
** deleter runs here (the DLPack Python specification); a consumer renames
** it "used_dltensor" and owns the tensor. */
void gkpy_capsule_destructor(void *capsule) {
  if (!py.capsule_is_valid(capsule, dltensor)) return;
  void *type, *value, *tb;
  py.err_fetch(&type, &value, &tb);
  dl_managed *t = py.capsule_get_pointer(capsule, dltensor);
  if (t && t->deleter) t->deleter(t);
  py.err_restore(type, value, tb);
}
