require('./src/internal-pki').holdProcessIdentities();
