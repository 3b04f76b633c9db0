#include "CActiveObjectsSupport.h"

long activeobjects_prototypes_in_progress = 0;
