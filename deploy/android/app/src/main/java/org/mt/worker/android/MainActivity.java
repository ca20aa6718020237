package org.mt.worker.android;

import android.Manifest;
import android.app.Activity;
import android.content.Intent;
import android.content.pm.PackageManager;
import android.os.Build;
import android.os.Bundle;

/**
 * No UI: starts {@link MtWorkerService} with this Intent's extras (hub, token, device, ...) from
 * the foreground, asking once for the notification permission on Android 13+, and finishes.
 *
 * <pre>
 * adb shell am start -n org.mt.worker/.android.MainActivity --es hub 192.168.1.5:50051
 * adb shell am start -n org.mt.worker/.android.MainActivity --ez stop true
 * </pre>
 */
public final class MainActivity extends Activity {
  private static final int REQUEST_NOTIFICATIONS = 1;

  @Override
  protected void onCreate(Bundle saved) {
    super.onCreate(saved);
    if (Build.VERSION.SDK_INT >= 33
        && checkSelfPermission(Manifest.permission.POST_NOTIFICATIONS) != PackageManager.PERMISSION_GRANTED) {
      requestPermissions(new String[] {Manifest.permission.POST_NOTIFICATIONS}, REQUEST_NOTIFICATIONS);
      return; // continues in onRequestPermissionsResult
    }
    startServiceAndFinish();
  }

  @Override
  public void onRequestPermissionsResult(int requestCode, String[] permissions, int[] results) {
    // Trains either way; without the permission the notification is not shown.
    startServiceAndFinish();
  }

  private void startServiceAndFinish() {
    Intent service = new Intent(this, MtWorkerService.class);
    Bundle extras = getIntent().getExtras();
    if (extras != null) service.putExtras(extras);
    if (getIntent().getBooleanExtra("stop", false)) service.setAction(MtWorkerService.ACTION_STOP);
    startForegroundService(service);
    finish();
  }
}
