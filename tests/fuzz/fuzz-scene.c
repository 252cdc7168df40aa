/* libFuzzer target: the scene-file parser. Whatever the bytes, it returns a
 * scene that validates and survives a save/load round trip unchanged, or an
 * error whose message names the file; never a crash, leak or UB. */
#include "scene-file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-scene: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GError *error = NULL;
	ClScene *scene = cl_scene_file_parse((const char *)data, (gssize)size, "fuzz.json", &error);
	if (!scene) {
		if (!error)
			fail("no scene and no error", NULL);
		if (!strstr(error->message, "fuzz.json"))
			fail("the message does not name the file", error->message);
		g_error_free(error);
		return 0;
	}
	if (error)
		fail("a scene and an error", error->message);
	char message[CL_MESSAGE_MAX];
	if (!cl_scene_validate(scene, message, sizeof message))
		fail("the loader returned an invalid scene", message);
	char *json = cl_scene_file_to_json(scene);
	ClScene *again = cl_scene_file_parse(json, -1, "round trip", &error);
	if (!again)
		fail("its own output does not load", error->message);
	if (!cl_scene_equal(scene, again))
		fail("load, save, load changed the scene", json);
	char *json_again = cl_scene_file_to_json(again);
	if (strcmp(json, json_again) != 0)
		fail("save, load, save changed the text", json);
	g_free(json_again);
	g_free(json);
	cl_scene_free(again);
	cl_scene_free(scene);
	return 0;
}
