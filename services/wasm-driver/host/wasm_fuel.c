/*
 * wasm_fuel.c - msc-wasm-fuel: prepares a WASI module for the wasm2c
 * runners.
 *
 *   msc-wasm-fuel [--check-wasi] IN.wasm OUT.wasm
 *	Adds the fuel counter: binaryen's log-execution pass calls
 *	log_execution at every function entry and exit and every loop
 *	header; that function becomes "__fuel -= 1; if (__fuel < 0)
 *	unreachable" on an exported mutable i64 global __fuel, inlined.
 *	The runner sets __fuel before _start; a trap with __fuel < 0 means
 *	the fuel ran out. --check-wasi first refuses a module the runners
 *	cannot run: one that is not a WASI command (exports _start and
 *	memory, has no start function) or that imports anything but the
 *	preview1 functions of wasi_sigs.h with their exact signatures.
 *
 *   msc-wasm-fuel --glue NAME HEADER OUT.c
 *	Writes the glue between a runner and the C that `wasm2c -n NAME`
 *	made (HEADER is its .h): the msc_wasm_* functions of
 *	runner_module.h, the same for a module linked in or dlopen()ed.
 *
 * Exit 0, or 1 with a message on stderr (binaryen itself may print
 * "Fatal: ..." and exit for a malformed module).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <binaryen-c.h>

#define MSC_WASM_ABI_ONLY
#include "runner_module.h"
#include "wasi_sigs.h"

#define MAX_WASM_BYTES (512u << 20)

static int
fail(const char *fmt, const char *arg)
{
	fputs("msc-wasm-fuel: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
}

static int
read_file(const char *path, char **bufp, size_t *lenp)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	char *buf;

	if (f == NULL)
		return -errno;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size <= 0 || (uint64_t)st.st_size > MAX_WASM_BYTES) {
		fclose(f);
		return -EINVAL;
	}
	if ((buf = malloc((size_t)st.st_size)) == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*bufp = buf;
	*lenp = (size_t)st.st_size;
	return 0;
}

/* Reads an unsigned LEB128 u32 at *p (< end); false when malformed. */
static bool
leb_u32(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;

	for (int shift = 0; shift < 35 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/*
 * True when the binary has a start section (id 8): a function that runs
 * while the module is instantiated, before the runner can cap its memory
 * or count its fuel. WASI commands start at _start instead.
 */
static bool
has_start_section(const char *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)buf + 8, *end = p + (len - 8);

	while (p < end) {
		uint8_t id = *p++;
		uint32_t size;

		if (!leb_u32(&p, end, &size) || size > (size_t)(end - p))
			return false;   /* binaryen reports the damage */
		if (id == 8)
			return true;
		p += size;
	}
	return false;
}

/* The signature of t as 'i'/'I' letters; false for other types. */
static bool
type_letters(BinaryenType t, char *out, size_t outlen)
{
	BinaryenType v[64];
	uint32_t n = BinaryenTypeArity(t);

	if (t == BinaryenTypeNone())
		n = 0;
	if (n >= outlen || n > 64)
		return false;
	if (n > 0)
		BinaryenTypeExpand(t, v);
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] == BinaryenTypeInt32())
			out[i] = 'i';
		else if (v[i] == BinaryenTypeInt64())
			out[i] = 'I';
		else
			return false;
	}
	out[n] = '\0';
	return true;
}

static bool
imported(const char *module)
{
	return module != NULL && *module != '\0';
}

/* Checks one imported function against wasi_sigs.h. */
static int
check_import(BinaryenFunctionRef f)
{
	const char *mod = BinaryenFunctionImportGetModule(f);
	const char *base = BinaryenFunctionImportGetBase(f);
	char p[64], r[64];

	if (strcmp(mod, "wasi_snapshot_preview1") != 0)
		return fail("the module imports from '%s': only "
			    "wasi_snapshot_preview1 is provided", mod);
	for (const struct wasi_sig *s = wasi_sigs; s->name != NULL; s++) {
		if (strcmp(s->name, base) != 0)
			continue;
		if (!type_letters(BinaryenFunctionGetParams(f), p, sizeof(p)) ||
		    !type_letters(BinaryenFunctionGetResults(f), r,
			sizeof(r)) ||
		    strcmp(p, s->params) != 0 || strcmp(r, s->result) != 0)
			return fail("the module imports WASI function '%s' "
				    "with a wrong signature", base);
		return 0;
	}
	return fail("the module imports WASI function '%s', which this "
		    "host does not provide", base);
}

static int
check_wasi(BinaryenModuleRef m)
{
	BinaryenExportRef e;
	int rv;

	e = BinaryenGetExport(m, "_start");
	if (e == NULL || BinaryenExportGetKind(e) != BinaryenExternalFunction())
		return fail("%s", "the module exports no _start function: "
			    "only WASI command modules can run");
	e = BinaryenGetExport(m, "memory");
	if (e == NULL || BinaryenExportGetKind(e) != BinaryenExternalMemory())
		return fail("%s", "the module exports no memory named "
			    "'memory'");
	for (BinaryenIndex i = 0; i < BinaryenGetNumFunctions(m); i++) {
		BinaryenFunctionRef f = BinaryenGetFunctionByIndex(m, i);

		if (imported(BinaryenFunctionImportGetModule(f)) &&
		    (rv = check_import(f)) != 0)
			return rv;
	}
	for (BinaryenIndex i = 0; i < BinaryenGetNumGlobals(m); i++) {
		BinaryenGlobalRef g = BinaryenGetGlobalByIndex(m, i);

		if (imported(BinaryenGlobalImportGetModule(g)))
			return fail("the module imports global '%s'",
			    BinaryenGlobalImportGetBase(g));
	}
	for (BinaryenIndex i = 0; i < BinaryenGetNumTables(m); i++) {
		BinaryenTableRef t = BinaryenGetTableByIndex(m, i);

		if (imported(BinaryenTableImportGetModule(t)))
			return fail("the module imports table '%s'",
			    BinaryenTableImportGetBase(t));
	}
	return 0;
}

/*
 * wasm2c gives instantiate() a parameter for the WASI instance only when
 * the module imports from wasi_snapshot_preview1; an unused import of
 * sched_yield makes that so for every module, as the glue expects.
 */
static void
anchor_wasi(BinaryenModuleRef m)
{
	for (BinaryenIndex i = 0; i < BinaryenGetNumFunctions(m); i++) {
		const char *mod = BinaryenFunctionImportGetModule(
		    BinaryenGetFunctionByIndex(m, i));

		if (imported(mod) && strcmp(mod, "wasi_snapshot_preview1") == 0)
			return;
	}
	BinaryenAddFunctionImport(m, "__msc_wasi_anchor",
	    "wasi_snapshot_preview1", "sched_yield", BinaryenTypeNone(),
	    BinaryenTypeInt32());
}

/* The fuel counter of the file comment. */
static int
add_fuel(BinaryenModuleRef m)
{
	static const char *log_pass[] = { "log-execution" };
	static const char *inline_pass[] = { "inlining" };
	BinaryenExpressionRef dec, test, body[2];

	if (BinaryenGetGlobal(m, "__fuel") != NULL ||
	    BinaryenGetExport(m, "__fuel") != NULL ||
	    BinaryenGetFunction(m, "log_execution") != NULL)
		return fail("%s", "the module already has __fuel or "
			    "log_execution");
	anchor_wasi(m);
	BinaryenModuleRunPasses(m, log_pass, 1);
	BinaryenRemoveFunction(m, "log_execution");
	BinaryenAddGlobal(m, "__fuel", BinaryenTypeInt64(), true,
	    BinaryenConst(m, BinaryenLiteralInt64(INT64_MAX)));
	BinaryenAddGlobalExport(m, "__fuel", "__fuel");
	dec = BinaryenGlobalSet(m, "__fuel", BinaryenBinary(m,
	    BinaryenSubInt64(), BinaryenGlobalGet(m, "__fuel",
		BinaryenTypeInt64()), BinaryenConst(m, BinaryenLiteralInt64(1))));
	test = BinaryenIf(m, BinaryenBinary(m, BinaryenLtSInt64(),
	    BinaryenGlobalGet(m, "__fuel", BinaryenTypeInt64()),
	    BinaryenConst(m, BinaryenLiteralInt64(0))), BinaryenUnreachable(m),
	    NULL);
	body[0] = dec;
	body[1] = test;
	BinaryenAddFunction(m, "log_execution", BinaryenTypeInt32(),
	    BinaryenTypeNone(), NULL, 0, BinaryenBlock(m, NULL, body, 2,
		BinaryenTypeNone()));
	BinaryenSetAlwaysInlineMaxSize(16);
	BinaryenModuleRunPasses(m, inline_pass, 1);
	if (!BinaryenModuleValidate(m))
		return fail("%s", "the instrumented module does not validate");
	return 0;
}

static int
write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (f == NULL)
		return fail("cannot create %s", path);
	ok = fwrite(buf, 1, len, f) == len;
	if (fclose(f) != 0 || !ok)
		return fail("cannot write %s", path);
	return 0;
}

static int
instrument(const char *in, const char *out, bool check)
{
	BinaryenModuleAllocateAndWriteResult res;
	BinaryenModuleRef m;
	char *buf = NULL;
	size_t len = 0;
	int rv;

	if ((rv = read_file(in, &buf, &len)) != 0)
		return fail("cannot read %s (a regular file of at most 512 "
			    "MiB)", in);
	if (len < 8 || memcmp(buf, "\0asm", 4) != 0) {
		free(buf);
		return fail("%s", "not a WebAssembly binary (no \\0asm "
			    "header)");
	}
	if (check && has_start_section(buf, len)) {
		free(buf);
		return fail("%s", "the module has a start function: a WASI "
			    "command must begin at _start");
	}
	m = BinaryenModuleRead(buf, len);
	free(buf);
	if (m == NULL)
		return fail("cannot parse %s", in);
	BinaryenModuleSetFeatures(m, BinaryenFeatureAll());
	if (check && (rv = check_wasi(m)) != 0)
		goto out;
	if ((rv = add_fuel(m)) != 0)
		goto out;
	res = BinaryenModuleAllocateAndWrite(m, NULL);
	rv = write_file(out, res.binary, res.binaryBytes);
	free(res.binary);
	free(res.sourceMap);
out:
	BinaryenModuleDispose(m);
	return rv;
}

static bool
c_identifier(const char *s)
{
	if (*s == '\0' || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int
write_glue(const char *name, const char *header, const char *out)
{
	FILE *f;

	if (!c_identifier(name))
		return fail("module name '%s' must be letters and digits",
		    name);
	if (strchr(header, '"') != NULL || strchr(header, '\n') != NULL)
		return fail("bad header name %s", header);
	if ((f = fopen(out, "w")) == NULL)
		return fail("cannot create %s", out);
	fprintf(f, "/* Generated by msc-wasm-fuel --glue. */\n"
	    "#include <stddef.h>\n#include <stdint.h>\n"
	    "#include \"%s\"\n\n"
	    "#if WASM_RT_MEMCHECK_SIGNAL_HANDLER != 1 || \\\n"
	    "    WASM_RT_SKIP_SIGNAL_RECOVERY != 0 || \\\n"
	    "    WASM_RT_USE_STACK_DEPTH_COUNT != 0\n"
	    "#error \"the runners' wasm-rt uses guard pages: compile with "
	    "-DWASM_RT_MEMCHECK_SIGNAL_HANDLER=1\"\n"
	    "#endif\n\n"
	    "unsigned msc_wasm_abi(void) { return %d; }\n"
	    "size_t msc_wasm_instance_size(void)\n"
	    "{ return sizeof(Z_%s_instance_t); }\n"
	    "void msc_wasm_init_module(void) { Z_%s_init_module(); }\n"
	    "void msc_wasm_instantiate(void *i,\n"
	    "    struct Z_wasi_snapshot_preview1_instance_t *w)\n"
	    "{ Z_%s_instantiate(i, w); }\n"
	    "void msc_wasm_free(void *i) { Z_%s_free(i); }\n"
	    "wasm_rt_memory_t *msc_wasm_memory(void *i)\n"
	    "{ return Z_%sZ_memory(i); }\n"
	    "void msc_wasm_start(void *i) { Z_%sZ__start(i); }\n"
	    "int64_t *msc_wasm_fuel(void *i)\n"
	    "{ return (int64_t *)Z_%sZ___fuel(i); }\n",
	    header, MSC_WASM_ABI, name, name, name, name, name, name, name);
	if (fclose(f) != 0)
		return fail("cannot write %s", out);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--glue") == 0)
		return write_glue(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "--check-wasi") == 0)
		return instrument(argv[2], argv[3], true);
	if (argc == 3 && argv[1][0] != '-')
		return instrument(argv[1], argv[2], false);
	fputs("usage: msc-wasm-fuel [--check-wasi] IN.wasm OUT.wasm\n"
	    "       msc-wasm-fuel --glue NAME HEADER OUT.c\n", stderr);
	return 2;
}
