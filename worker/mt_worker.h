/* The embeddable worker: a small, stable C API over the worker library, for
 * apps that run training inside their own process (the Android service via
 * JNI, a desktop agent). mtworker itself drives the same library.
 *
 * Life of a worker:
 *   mt_worker_config c; mt_worker_config_init(&c); c.hub = "192.168.1.5";
 *   char err[256];
 *   mt_worker* w = mt_worker_start(&c, err, sizeof err);   // NULL: see err
 *   ... mt_worker_poll(w, &status) as often as you like ...
 *   ... mt_worker_set_device_state(w, &state) when battery/network change ...
 *   mt_worker_stop(w, 10.0);   // leaves the run (the hub is told)
 *   mt_worker_free(w);
 *
 * The worker trains on a thread of its own; every function here is
 * thread-safe and returns promptly (mt_worker_stop waits at most its
 * timeout). Nothing here throws or aborts: errors come back as return
 * values and text. Strings passed in are copied; the caller keeps
 * ownership. Compatibility: fields are only ever added at the end of the
 * structs, whose size the caller passes in (struct_size), and
 * MT_WORKER_API_VERSION changes when a meaning changes. A new field of
 * mt_worker_config also needs its line in worker/mt_worker_config_fields.h
 * (the build fails without it; docs/android.md says what else).
 */
#ifndef MT_WORKER_H_
#define MT_WORKER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: TLS by default (the fields after read_system_device_state); a worker
 * of version 1 spoke plaintext. */
#define MT_WORKER_API_VERSION 2

typedef struct mt_worker mt_worker;

typedef struct mt_worker_config {
  size_t struct_size;             /* sizeof(mt_worker_config); set by mt_worker_config_init */
  const char* hub;                /* "host", "host:port" or "[v6]:port"; required */
  const char* name;               /* shown by the hub; NULL: the host name */
  const char* token;              /* shared secret the hub expects; NULL: none */
  const char* device;             /* "cpu" (NULL), "opencl" or "auto" */
  int threads;                    /* compute threads; 0: 1; negative: refused */
  const char* data_dir;           /* train on these local files; NULL: the hub's dataset */
  int64_t memory_budget_bytes;    /* for the model and its batch; 0: no limit */
  double connect_timeout_seconds; /* keep trying to (re)join this long; <= 0: 600 */
  const char* report_path;        /* JSON report written when the worker ends; NULL: none */
  /* When to leave the run (the hub is told; the worker ends in DONE): */
  int min_battery_percent;  /* below this while not charging; 0: never */
  int require_charging;     /* nonzero: leave when not on external power */
  int require_unmetered;    /* nonzero: leave on a metered network */
  double max_temperature_c; /* above this; 0: never */
  /* Nonzero (default): read battery and temperature from /sys when no state
   * was set with mt_worker_set_device_state. */
  int read_system_device_state;
  /* Since version 2. How the hub is trusted: TLS always, unless insecure.
   * Without tls_ca_path or hub_fingerprint, the hub's fingerprint seen first
   * for its address is remembered in state_dir/known_hubs and a different
   * one later refused (trust on first use, as SSH). */
  int insecure;                /* nonzero: plaintext (the hub runs with --insecure) */
  const char* tls_ca_path;     /* trust a hub whose certificate chains to this CA (PEM) */
  const char* hub_fingerprint; /* or exactly this certificate: "SHA256:AB:CD:..." */
  const char* state_dir;       /* for known_hubs; NULL: $MT_STATE_DIR, else $HOME/.mt */
  const char* tls_cert_path;   /* mutual TLS: this worker's certificate (PEM) ... */
  const char* tls_key_path;    /* ... and its private key */
  /* Since version 2. The hub names the dataset to open: a known name, or a
   * path under one of these directories ("DIR:DIR:..."); NULL: the
   * environment variable MT_ALLOW_DATA, else known names only. */
  const char* allow_data_dirs;
} mt_worker_config;

/* Defaults: everything above zero/NULL except struct_size and
 * read_system_device_state = 1. */
void mt_worker_config_init(mt_worker_config* config);

typedef enum mt_worker_state {
  MT_WORKER_STARTING = 0,
  MT_WORKER_JOINING = 1,
  MT_WORKER_TRAINING = 2,
  MT_WORKER_RECONNECTING = 3, /* lost the hub; joining again with backoff */
  MT_WORKER_STOPPING = 4,
  MT_WORKER_DONE = 5,  /* ended normally: see stop_reason */
  MT_WORKER_FAILED = 6 /* ended on an error: see last_error */
} mt_worker_state;

typedef struct mt_worker_status {
  size_t struct_size;    /* the caller sets sizeof(mt_worker_status) */
  int state;             /* mt_worker_state */
  int64_t step;          /* the hub's step this worker last trained (0-based) */
  int64_t steps_trained; /* steps this worker trained */
  double loss;           /* the hub's mean training loss of the last step */
  int batch;             /* this worker's batch in its last step */
  double test_accuracy;  /* the hub's at the end of the run; -1 before */
  char last_error[256];  /* "" unless FAILED */
  char stop_reason[256]; /* why the run ended for this worker; "" while running */
} mt_worker_status;

typedef struct mt_device_state {
  int battery_percent;  /* 0..100; -1 unknown or no battery */
  int charging;         /* 1, 0; -1 unknown */
  int unmetered;        /* 1, 0; -1 unknown */
  double temperature_c; /* -1000 or below: unknown */
} mt_device_state;

/* Checks the configuration (the hub address must parse and resolve) and
 * starts the worker. Returns NULL with the reason in error (when not NULL)
 * on a bad configuration. */
mt_worker* mt_worker_start(const mt_worker_config* config, char* error, size_t error_size);

/* Fills *status (status->struct_size must be set). Returns 0, or -1 on a
 * NULL argument or too small a struct. */
int mt_worker_poll(const mt_worker* worker, mt_worker_status* status);

/* The device's state as the embedder sees it; from now on it replaces
 * what /sys says. Checked against the policy before every step. */
void mt_worker_set_device_state(mt_worker* worker, const mt_device_state* state);

/* Leaves the run and waits up to timeout_seconds for the worker to end.
 * Returns 0 when it has ended, -1 when it is still ending at the timeout
 * (mt_worker_free still waits for it). */
int mt_worker_stop(mt_worker* worker, double timeout_seconds);

/* Stops the worker if needed, waits for it, and frees it. NULL is fine. */
void mt_worker_free(mt_worker* worker);

/* "starting", "joining", ... for logs. */
const char* mt_worker_state_name(int state);

#ifdef __cplusplus
}
#endif

#endif /* MT_WORKER_H_ */
