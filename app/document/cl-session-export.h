/* Export All: every current result of a document into a folder — the scene;
 * the canvas, the gradient table, trajectories and the perturbation study of
 * its Run; the heatmap, learning and convergence results — as figures (PNG,
 * SVG, PDF) and CSV, each written atomically, and manifest.json last (its
 * presence means the export is complete). Every result is stamped with the
 * scene it was computed for: that scene is written beside it when it is not
 * the document's, and the manifest marks such results stale. No GTK. */
#pragma once

#include "cl-document.h"

G_BEGIN_DECLS

/* dark: draw the figures in the dark theme. */
gboolean cl_session_export(ClDocument *doc, const char *folder, gboolean dark, GError **error);

G_END_DECLS
