// JNI bridge for org.mt.worker.NativeWorker over the worker's C API
// (worker/mt_worker.h). The same file builds into libmtworker_jni.so for
// Android (app/src/main/cpp/CMakeLists.txt, NDK) and for the host
// (deploy/android/host/CMakeLists.txt, JDK) where CI tests it.
//
// start reads org.mt.worker.WorkerConfig's fields by name, as the table of
// mt_worker_config's fields says (worker/mt_worker_config_fields.h, one line
// per field), so a worker option is a field on both sides and one line
// there, not a longer native signature.
//
// At this boundary nothing may crash the JVM: bad configurations become
// IllegalArgumentException with the C API's reason, a WorkerConfig class
// that lacks a field the bridge expects (or has it with another type)
// IllegalStateException naming the field, unknown or freed handles
// IllegalStateException, anything unexpected RuntimeException. Strings
// handed to Java are made valid modified UTF-8 first (the C API truncates
// its texts at 255 bytes, possibly inside a character, and Android's
// CheckJNI aborts on invalid UTF-8).
//
// Handles are checked against a registry of live workers, so a stale handle
// throws instead of touching freed memory. poll and setDeviceState run under
// the registry lock (they return at once); stop waits without it, so the
// caller must not free a worker while another thread stops it
// (WorkerController takes care of that).
#include <jni.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "worker/mt_worker.h"
#include "worker/mt_worker_config_fields.h"

namespace {

std::mutex g_mu;
std::unordered_set<mt_worker*> g_live;  // guarded by g_mu
jclass g_status_class = nullptr;        // global ref to org.mt.worker.WorkerStatus
jmethodID g_status_ctor = nullptr;

using mt::capi::BooleanMember;
using mt::capi::ConfigField;
using mt::capi::ConfigMember;
using mt::capi::DoubleMember;
using mt::capi::IntMember;
using mt::capi::kConfigFields;
using mt::capi::kJavaTypeNames;
using mt::capi::LongMember;
using mt::capi::StringMember;

// In ConfigMember's order.
constexpr const char* kJniSignatures[] = {"Ljava/lang/String;", "I", "Z", "J", "D"};
static_assert(std::size(kJniSignatures) == std::variant_size_v<ConfigMember>,
              "one JNI signature per ConfigMember alternative");

constexpr size_t kConfigFieldCount = std::size(kConfigFields);

// Resolved once in JNI_OnLoad. A class that does not match kConfigFields
// does not fail the load: g_config_error says what is wrong, and every start
// throws it.
jclass g_config_class = nullptr;  // global ref to org.mt.worker.WorkerConfig
jfieldID g_config_field_ids[kConfigFieldCount] = {};
std::string g_config_error;

// Keeps ASCII and well-formed 2- and 3-byte UTF-8 sequences (no surrogates);
// anything else, including 4-byte sequences (not modified UTF-8), becomes '?'.
std::string ModifiedUtf8(const char* s) {
  std::string out;
  if (!s) return out;
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  while (*p) {
    const unsigned char c = *p;
    int n = 0;
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xC2 && c <= 0xDF && cont(p[1])) {
      n = 2;
    } else if ((c & 0xF0) == 0xE0 && cont(p[1]) && cont(p[2])) {
      const unsigned cp = ((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) n = 3;
    }
    if (n == 0) {
      out += '?';
      ++p;
      // Skip the rest of a broken or 4-byte sequence.
      while (*p && cont(*p)) ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    }
  }
  return out;
}

void Throw(JNIEnv* env, const char* class_name, const std::string& message) {
  if (env->ExceptionCheck()) return;  // keep the first one (e.g. OutOfMemoryError)
  jclass cls = env->FindClass(class_name);
  if (!cls) return;  // FindClass left its own exception pending
  env->ThrowNew(cls, ModifiedUtf8(message.c_str()).c_str());
  env->DeleteLocalRef(cls);
}

// A Java string (a local reference it takes over) as UTF-8 while it lives;
// null stays nullptr.
class JavaString {
 public:
  JavaString(JNIEnv* env, jstring s) : env_(env), s_(s) {
    if (s_) {
      chars_ = env_->GetStringUTFChars(s_, nullptr);
      if (!chars_) failed_ = true;  // OutOfMemoryError pending
    }
  }
  ~JavaString() {
    if (chars_) env_->ReleaseStringUTFChars(s_, chars_);
    if (s_) env_->DeleteLocalRef(s_);
  }
  JavaString(const JavaString&) = delete;
  JavaString& operator=(const JavaString&) = delete;
  const char* get() const { return chars_; }
  bool failed() const { return failed_; }

 private:
  JNIEnv* env_;
  jstring s_;
  const char* chars_ = nullptr;
  bool failed_ = false;
};

mt_worker* FromHandle(jlong handle) {
  return reinterpret_cast<mt_worker*>(static_cast<intptr_t>(handle));
}

// The live worker behind `handle`, or nullptr with IllegalStateException
// pending. Call with g_mu held.
mt_worker* LiveLocked(JNIEnv* env, jlong handle) {
  mt_worker* w = FromHandle(handle);
  if (handle == 0 || g_live.count(w) == 0) {
    Throw(env, "java/lang/IllegalStateException",
          "no such worker (never started, or already freed)");
    return nullptr;
  }
  return w;
}

void ThrowUnexpected(JNIEnv* env) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    Throw(env, "java/lang/OutOfMemoryError", "out of memory in the native worker");
  } catch (const std::exception& e) {
    Throw(env, "java/lang/RuntimeException", std::string("native worker: ") + e.what());
  } catch (...) {
    Throw(env, "java/lang/RuntimeException", "native worker: unknown error");
  }
}

// Looks up every kConfigFields entry on org.mt.worker.WorkerConfig; what
// does not match goes into g_config_error. Leaves no exception pending.
void ResolveConfigFields(JNIEnv* env) {
  jclass cls = env->FindClass("org/mt/worker/WorkerConfig");
  if (!cls) {
    env->ExceptionClear();
    g_config_error = "the JNI bridge cannot find class org.mt.worker.WorkerConfig";
    return;
  }
  g_config_class = static_cast<jclass>(env->NewGlobalRef(cls));
  env->DeleteLocalRef(cls);
  if (!g_config_class) {
    env->ExceptionClear();
    g_config_error = "the JNI bridge cannot hold class org.mt.worker.WorkerConfig";
    return;
  }
  std::string mismatched;
  for (size_t i = 0; i < kConfigFieldCount; ++i) {
    const ConfigField& f = kConfigFields[i];
    const size_t type = f.member.index();
    g_config_field_ids[i] = env->GetFieldID(g_config_class, f.java_name, kJniSignatures[type]);
    if (!g_config_field_ids[i]) {
      env->ExceptionClear();  // NoSuchFieldError
      mismatched +=
          std::string(mismatched.empty() ? "" : ", ") + kJavaTypeNames[type] + " " + f.java_name;
    }
  }
  if (!mismatched.empty())
    g_config_error = "WorkerConfig does not match the JNI bridge: no instance field " + mismatched +
                     " (missing or of another type; WorkerConfig.java and "
                     "worker/mt_worker_config_fields.h must agree)";
}

// Fills c from a WorkerConfig; the strings it points at live in `strings`.
// False with an exception pending when a string cannot be read.
bool ReadConfig(JNIEnv* env, jobject config, mt_worker_config* c,
                std::vector<std::unique_ptr<JavaString>>* strings) {
  for (size_t i = 0; i < kConfigFieldCount; ++i) {
    const jfieldID id = g_config_field_ids[i];
    const ConfigMember& m = kConfigFields[i].member;
    if (const auto* s = std::get_if<StringMember>(&m)) {
      strings->push_back(
          std::make_unique<JavaString>(env, static_cast<jstring>(env->GetObjectField(config, id))));
      if (strings->back()->failed()) return false;
      c->*(s->member) = strings->back()->get();
    } else if (const auto* n = std::get_if<IntMember>(&m)) {
      c->*(n->member) = env->GetIntField(config, id);
    } else if (const auto* b = std::get_if<BooleanMember>(&m)) {
      c->*(b->member) = env->GetBooleanField(config, id) ? 1 : 0;
    } else if (const auto* l = std::get_if<LongMember>(&m)) {
      c->*(l->member) = env->GetLongField(config, id);
    } else if (const auto* d = std::get_if<DoubleMember>(&m)) {
      c->*(d->member) = env->GetDoubleField(config, id);
    }
  }
  return true;
}

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass cls = env->FindClass("org/mt/worker/WorkerStatus");
  if (!cls) return JNI_ERR;
  g_status_class = static_cast<jclass>(env->NewGlobalRef(cls));
  env->DeleteLocalRef(cls);
  if (!g_status_class) return JNI_ERR;
  g_status_ctor =
      env->GetMethodID(g_status_class, "<init>", "(IJJDIDLjava/lang/String;Ljava/lang/String;)V");
  if (!g_status_ctor) return JNI_ERR;
  ResolveConfigFields(env);
  return JNI_VERSION_1_6;
}

JNIEXPORT jlong JNICALL Java_org_mt_worker_NativeWorker_start(JNIEnv* env, jclass, jobject config) {
  try {
    if (!config) {
      Throw(env, "java/lang/NullPointerException", "config");
      return 0;
    }
    if (!g_config_error.empty()) {
      Throw(env, "java/lang/IllegalStateException", g_config_error);
      return 0;
    }
    if (!env->IsInstanceOf(config, g_config_class)) {
      Throw(env, "java/lang/IllegalArgumentException",
            "config is not the org.mt.worker.WorkerConfig the bridge knows");
      return 0;
    }
    mt_worker_config c;
    mt_worker_config_init(&c);
    std::vector<std::unique_ptr<JavaString>> strings;
    if (!ReadConfig(env, config, &c, &strings)) return 0;
    char error[256] = "";
    mt_worker* w = mt_worker_start(&c, error, sizeof error);
    if (!w) {
      Throw(env, "java/lang/IllegalArgumentException",
            error[0] ? error : "the worker did not start");
      return 0;
    }
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_live.insert(w);
    }
    return static_cast<jlong>(reinterpret_cast<intptr_t>(w));
  } catch (...) {
    ThrowUnexpected(env);
    return 0;
  }
}

JNIEXPORT jobject JNICALL Java_org_mt_worker_NativeWorker_poll(JNIEnv* env, jclass, jlong handle) {
  try {
    mt_worker_status s{};
    s.struct_size = sizeof s;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      mt_worker* w = LiveLocked(env, handle);
      if (!w) return nullptr;
      if (mt_worker_poll(w, &s) != 0) {
        Throw(env, "java/lang/IllegalStateException", "mt_worker_poll failed");
        return nullptr;
      }
    }
    jstring last_error = env->NewStringUTF(ModifiedUtf8(s.last_error).c_str());
    if (!last_error) return nullptr;
    jstring stop_reason = env->NewStringUTF(ModifiedUtf8(s.stop_reason).c_str());
    if (!stop_reason) {
      env->DeleteLocalRef(last_error);
      return nullptr;
    }
    jobject status = env->NewObject(g_status_class, g_status_ctor, static_cast<jint>(s.state),
                                    static_cast<jlong>(s.step), static_cast<jlong>(s.steps_trained),
                                    static_cast<jdouble>(s.loss), static_cast<jint>(s.batch),
                                    static_cast<jdouble>(s.test_accuracy), last_error, stop_reason);
    env->DeleteLocalRef(last_error);
    env->DeleteLocalRef(stop_reason);
    return status;  // nullptr with the constructor's exception pending
  } catch (...) {
    ThrowUnexpected(env);
    return nullptr;
  }
}

JNIEXPORT void JNICALL Java_org_mt_worker_NativeWorker_setDeviceState(JNIEnv* env, jclass,
                                                                      jlong handle,
                                                                      jint battery_percent,
                                                                      jint charging, jint unmetered,
                                                                      jdouble temperature_c) {
  try {
    mt_device_state d;
    d.battery_percent = battery_percent;
    d.charging = charging;
    d.unmetered = unmetered;
    d.temperature_c = std::isnan(temperature_c) ? -1000.0 : temperature_c;
    std::lock_guard<std::mutex> lock(g_mu);
    mt_worker* w = LiveLocked(env, handle);
    if (w) mt_worker_set_device_state(w, &d);
  } catch (...) {
    ThrowUnexpected(env);
  }
}

JNIEXPORT jboolean JNICALL Java_org_mt_worker_NativeWorker_stop(JNIEnv* env, jclass, jlong handle,
                                                                jdouble timeout_seconds) {
  try {
    mt_worker* w = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      w = LiveLocked(env, handle);
    }
    if (!w) return JNI_FALSE;
    return mt_worker_stop(w, std::isnan(timeout_seconds) ? 0.0 : timeout_seconds) == 0 ? JNI_TRUE
                                                                                       : JNI_FALSE;
  } catch (...) {
    ThrowUnexpected(env);
    return JNI_FALSE;
  }
}

JNIEXPORT void JNICALL Java_org_mt_worker_NativeWorker_free(JNIEnv* env, jclass, jlong handle) {
  try {
    if (handle == 0) return;
    mt_worker* w = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      w = LiveLocked(env, handle);
      if (!w) return;
      g_live.erase(w);
    }
    mt_worker_free(w);  // waits for the worker thread; outside the lock
  } catch (...) {
    ThrowUnexpected(env);
  }
}

}  // extern "C"
