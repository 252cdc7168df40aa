/* Scene files: JSON, version 1 ({"contactlab": 1, …}), read and written with json-glib. */
#pragma once

#include "contactlab/sim.h"

#include <glib.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ClScene, cl_scene_free)

#define CL_SCENE_FILE_ERROR (cl_scene_file_error_quark())
GQuark cl_scene_file_error_quark(void);

typedef enum {
	CL_SCENE_FILE_ERROR_SYNTAX,  /* not JSON */
	CL_SCENE_FILE_ERROR_INVALID, /* JSON, but not a valid scene: message names the JSON path */
	CL_SCENE_FILE_ERROR_IO,
} ClSceneFileError;

/* Parses a scene. On error, the message reads "FILE: PATH: reason", e.g.
 * "scene.json: balls[1].radius: must be positive and finite"; filename is
 * only used for messages and may be NULL. */
ClScene *cl_scene_file_parse(const char *data, gssize length, const char *filename, GError **error);
/* A scene from a parsed JSON value (a lesson's inline scene), with the
 * messages of cl_scene_file_parse after where. */
struct _JsonNode;
struct ClJsonDocument;
ClScene *cl_scene_file_read_node(struct _JsonNode *node, const struct ClJsonDocument *document, const char *where,
								 GError **error);
ClScene *cl_scene_file_load(const char *path, GError **error);

/* Serialises with locale-independent shortest round-trip numbers. */
char *cl_scene_file_to_json(const ClScene *scene);
/* Writes atomically (temporary file + rename): never a half-written file. */
gboolean cl_scene_file_save(const ClScene *scene, const char *path, GError **error);

/* Applies "KEY=VALUE" overrides: scene keys (steps, duration, elasticity,
 * friction, gravity.y, ball.position.x, …) or BACKEND.PARAM
 * (impulse-toi.precision=float64, compliant-warp.stiffness=1e5). */
gboolean cl_scene_apply_setting(ClScene *scene, const char *setting, GError **error);

/* The folder holding presets/ and reference/: $CONTACTLAB_DATA_DIR, the
 * source tree's data/ when run from a build tree, or the installed datadir. */
const char *cl_data_dir(void);
typedef struct {
	char *id;          /* the file name without .json: load-preset's argument */
	char *name;        /* the scene's name */
	char *description; /* its one line, "" when it has none */
} ClPresetInfo;

/* Every scene in data/presets/ that loads, by id (a GPtrArray of
 * ClPresetInfo; g_ptr_array_unref it). */
GPtrArray *cl_preset_list(void);
/* Loads data/presets/ID.json. */
ClScene *cl_preset_load(const char *id, GError **error);
