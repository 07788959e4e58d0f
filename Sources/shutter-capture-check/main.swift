print("shutter-capture-check")
