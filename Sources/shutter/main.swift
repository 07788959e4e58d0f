import ShutterCore
print("shutter")
