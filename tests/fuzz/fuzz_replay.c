/*
 * fuzz_replay.c - the main of every fuzz target's replay build (no
 * libFuzzer): runs the target's LLVMFuzzerTestOneInput once per file named
 * on the command line (its corpus), each read whole up to 1 MiB, so the
 * corpora run as unit tests under the sanitizers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (f == NULL) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	return 0;
}
